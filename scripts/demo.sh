#!/bin/sh
# Set up userdt and run its main job: dtd publishes a dt(4) device, btrace
# runs bt(5) scripts on it, and a traced program's system calls, dtd's
# interval timer and the profile sampler feed it.  Uses a private device
# path, so it never disturbs a dtd already serving /dev/dt.
set -eu
cd "$(dirname "$0")/.."

./scripts/deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null

tmp=$(mktemp -d /tmp/userdt-demo.XXXXXX)
dtd_pid=
cleanup() {
	if [ -n "$dtd_pid" ]; then
		kill -TERM "$dtd_pid" 2>/dev/null || true
		wait "$dtd_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

mkfifo "$tmp/ready"
build/daemon/dtd --foreground --device "$tmp/dt" \
	--ingest "$tmp/ingest.sock" --ksyms "$tmp/ksyms" \
	--ready-fd 3 3>"$tmp/ready" &
dtd_pid=$!
read -r line <"$tmp/ready"	# dtd writes "ready" once the device is served
echo "== dtd (pid $dtd_pid) serves $tmp/dt"

export DT_DEVICE="$tmp/dt" USERDT_SOCKET="$tmp/ingest.sock"
bt=build/client/btrace

echo
echo "== btrace -l: the first probes of the device"
$bt -l | head -n 6

echo
echo "== interval: ten ticks of dtd's clock, then exit()"
$bt -e 'interval:hz:10 { @ticks = count(); printf("tick %d on cpu %d\n", @ticks, cpu); if (@ticks == 10) { exit(); } }'

echo
echo "== syscalls of a traced program (btrace -c): files opened, bytes read"
$bt -v -e '
syscall:openat:entry { @opens[comm] = count(); }
syscall:read:return /retval > 0/ { @bytes[comm] = sum(retval); @sizes = hist(retval); }
END { printf("traced run finished\n"); }' \
	-c "sh -c 'cat /etc/os-release /etc/passwd | wc -l; ls /usr/lib | wc -l'"

echo
echo "== profile: where a busy program spends its CPU (kernel and user stacks)"
$bt -e 'profile:hz:997 /comm == "yes"/ { @[ustack] = count(); } interval:s:1 { exit(); }' \
	-c "sh -c 'yes >/dev/null & p=\$!; sleep 1.5; kill \$p'" | head -n 40
