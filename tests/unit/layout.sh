#!/bin/sh
#
# Copyright (c) 2026 The userdt authors
# ISC licence: see include/dev/dt/dtvar.h.
#
# The boundaries of the tree (doc/design.md, "The tree"), checked on the
# #include lines of the sources: the device core names no provider, front
# end or transport header; the ingest transport names no provider header
# but the syscall table (its wire's probe indexes); a provider's dtd half
# names no other provider's header and not the core's private softc; the
# preload library's syscall half names nothing of its profile half, which
# names only the host header of the syscall half.  A header is known by
# its file name, as the quoted includes name it.
#
# usage: layout.sh SOURCE_ROOT
set -u
root=${1:?usage: layout.sh SOURCE_ROOT}
cd "$root" || exit 1
fail=0
checked=0

# Names of the headers under the given folders, one a line.
headers() {
	find "$@" -name '*.h' -printf '%f\n' 2>/dev/null | sort -u
}

# forbid WHAT FOLDER... -- NAME...: no source under FOLDERs includes a
# header called NAME (quoted or angled, by file name).
forbid() {
	what=$1; shift
	dirs=
	while [ "$1" != -- ]; do dirs="$dirs $1"; shift; done
	shift
	for name in "$@"; do
		hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]([^\">]*/)?$name[\">]" \
		    $dirs --include='*.c' --include='*.h' --include='*.S' 2>/dev/null)
		if [ -n "$hits" ]; then
			printf 'layout: %s:\n%s\n' "$what" "$hits"
			fail=$((fail + 1))
		fi
		checked=$((checked + 1))
	done
}

# The folders must be there, or every check below passes on nothing.
for d in daemon/core daemon/fe daemon/ingest daemon/sys providers/syscall/preload \
    providers/syscall/dtd providers/syscall/launch providers/syscall/table \
    providers/profile/preload providers/profile/dtd providers/tracepoint \
    providers/kprobe providers/interval providers/replay shim/dev; do
	[ -d "$d" ] || { echo "layout: $d is missing"; fail=$((fail + 1)); }
done

forbid "the core includes a provider, front-end or transport header" \
    daemon/core -- $(headers providers daemon/fe daemon/ingest) fuse_lowlevel.h cuse_lowlevel.h fuse.h
forbid "the ingest transport includes a provider header" \
    daemon/ingest -- $(headers providers | grep -vx 'systab.h')
forbid "a provider includes the core's private state" \
    providers -- dt_softc.h $(headers daemon/fe)
forbid "the syscall provider includes the profile provider" \
    providers/syscall -- $(headers providers/profile providers/tracepoint \
    providers/interval providers/kprobe)
forbid "the profile provider includes the tracepoint or interval provider" \
    providers/profile -- $(headers providers/tracepoint providers/interval \
    providers/kprobe)
forbid "the tracepoint provider includes another provider (but the syscall table)" \
    providers/tracepoint -- $(headers providers/profile providers/interval \
    providers/kprobe providers/syscall/dtd providers/syscall/preload \
    providers/syscall/launch)
forbid "the kprobe provider includes another provider (but the tracepoint reader)" \
    providers/kprobe -- $(headers providers/profile providers/interval \
    providers/syscall providers/replay) \
    $(headers providers/tracepoint | grep -vx -e dt_tp_perf.h -e dt_tp_task.h)
forbid "the replay provider includes another provider" \
    providers/replay -- $(headers providers/profile providers/tracepoint \
    providers/interval providers/syscall providers/kprobe)
forbid "the profile half of the preload library includes more of the syscall half than udt_host.h" \
    providers/profile/preload -- $(headers providers/syscall | grep -vx 'udt_host.h')
forbid "the device's preload library includes more than include/" \
    shim/dev -- $(headers daemon providers client tools shim | grep -vx 'udt_dev.h')

if [ "$fail" -ne 0 ]; then
	echo "layout: $fail boundaries crossed ($checked header names checked)"
	exit 1
fi
echo "layout: $checked header names checked, no boundary crossed"
