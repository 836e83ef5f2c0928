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
echo "== syscalls of a traced program (btrace -c): paths opened, counts, bytes, latency"
$bt -v -c "sh -c 'cat /etc/os-release | wc -l; build/examples/busy 1'" \
	examples/demo.bt

echo
echo "== profile: where the kernel spends a busy program's CPU (kstack)"
dd if=/dev/zero of=/dev/null bs=64k count=400000 2>/dev/null &
dd_pid=$!
$bt -e "profile:hz:499 /pid == $dd_pid/ { @[kstack] = count(); } interval:ms:700 { exit(); }" |
	awk '/^@/ { n++ } n <= 3'
kill "$dd_pid" 2>/dev/null || true
wait "$dd_pid" 2>/dev/null || true

echo
echo "== profile: user stacks of a program built with frame pointers"
$bt -e 'profile:hz:499 /comm == "busy"/ { @[ustack] = count(); }' \
	-c "build/examples/busy 1" | awk '/^@/ { n++ } n <= 4'
