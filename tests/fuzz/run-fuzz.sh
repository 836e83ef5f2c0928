#!/bin/sh
#
# Build and run dt_dev_fuzz, the libFuzzer target over the device core.
#
# usage: run-fuzz.sh [-b builddir] command [args]
#
#   build           configure (once) and build the fuzzer
#   regress         replay the committed corpus, each input once
#   fuzz SECONDS    replay, fuzz for SECONDS, merge what found new
#                   coverage into the committed corpus (crashes go to
#                   tests/fuzz/crashes-found/)
#   test SECONDS    replay, then fuzz for SECONDS leaving the source tree
#                   alone (the meson test, suite 'fuzz')
#   minimize        shrink the committed corpus to what adds coverage,
#                   keeping the hand-made seed-* programs
#   seeds           rewrite the seed-* programs into the corpus
#   repro FILE...   run the given inputs once (a crash reproduces)
#   coverage        line coverage of the core by the committed corpus
#                   (a third build, builddir-cov, instrumented for llvm-cov)
#
# libFuzzer needs clang, the project builds with gcc: the fuzzer comes from
# a second meson build of this tree (default build-fuzz/clang/) with
# clang, ASan and UBSan, in which meson links exactly what dtd's core
# needs.  That build keeps -Werror for the fuzzer only, so a clang-only
# warning elsewhere does not stop the fuzzing of the core.
#
# Exits 0 or 1, never 77: meson would read 77 as "skipped", and a missing
# clang or libFuzzer must fail (scripts/deps.sh installs them).

set -u

die() {
	echo "run-fuzz.sh: $*" >&2
	exit 1
}

here=$(cd "$(dirname "$0")" && pwd) || die "cannot find myself"
src=$(cd "$here/../.." && pwd)
corpus=$here/corpus/dt_dev
crashes=$here/crashes-found
bdir=$src/build-fuzz/clang

while getopts b: opt; do
	case $opt in
	b)	bdir=$OPTARG ;;
	*)	die "usage: run-fuzz.sh [-b builddir] command [args]" ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || die "usage: run-fuzz.sh [-b builddir] command [args]"
cmd=$1
shift

fuzzer=$bdir/tests/fuzz/dt_dev_fuzz

# Sanitizer reports end the run with a stack; leaks count (libFuzzer
# checks them per input).  halt_on_error: UBSan findings are fatal too.
# What the caller set (meson test sets both) comes last and wins.
ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}
export ASAN_OPTIONS UBSAN_OPTIONS

# Merges keep an input for the edges it adds, not for hit counts: that
# keeps the committed corpus to a few hundred small files.
mergeflags="-merge=1 -use_counters=0"

# -error_exitcode: libFuzzer's default, 77, is meson's "skipped".
# -timeout above the target's own 5 s liveness wait.
fzflags="-error_exitcode=1 -timeout_exitcode=1 -timeout=30 -rss_limit_mb=4096
-max_len=1024 -print_final_stats=1"

build() {
	command -v clang >/dev/null 2>&1 ||
	    die "clang not found (scripts/deps.sh installs clang and libclang-rt-14-dev)"
	command -v meson >/dev/null 2>&1 || die "meson not found"
	if [ ! -f "$bdir/build.ninja" ]; then
		mkdir -p "$bdir" || die "cannot create $bdir"
		wipe=
		[ -d "$bdir/meson-private" ] && wipe=--wipe
		CC=clang meson setup $wipe "$bdir" "$src" \
		    --buildtype=debugoptimized \
		    -Dwerror=true \
		    -Db_sanitize=address,undefined \
		    -Db_lundef=false \
		    -Dc_args="-fsanitize=fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer" \
		    >"$bdir.setup.log" 2>&1 || {
			cat "$bdir.setup.log" >&2
			die "meson setup of the clang build in $bdir failed"
		}
	fi
	grep -q "^build tests/fuzz/dt_dev_fuzz:" "$bdir/build.ninja" ||
	    die "clang cannot link libFuzzer, so there is no fuzz target" \
		"(install libclang-rt-14-dev: scripts/deps.sh)"
	ninja -C "$bdir" tests/fuzz/dt_dev_fuzz >&2 ||
	    die "building the fuzzer failed"
}

# Replay every committed input once.
regress() {
	set -- "$corpus"/*
	[ -e "$1" ] || die "no corpus in $corpus"
	echo "run-fuzz.sh: replaying $# inputs from $corpus" >&2
	"$fuzzer" $fzflags -runs=1 "$@" >"$bdir/regress.log" 2>&1 || {
		tail -n 60 "$bdir/regress.log" >&2
		die "an input of the corpus fails (log: $bdir/regress.log)"
	}
	echo "run-fuzz.sh: corpus replayed cleanly" >&2
}

# Fuzz for $1 seconds; new inputs in $2, crashes under prefix $3.
fuzz() {
	mkdir -p "$2" || die "cannot create $2"
	echo "run-fuzz.sh: fuzzing for $1 s (new inputs in $2)" >&2
	"$fuzzer" $fzflags -max_total_time="$1" -artifact_prefix="$3" \
	    "$2" "$corpus" >"$bdir/fuzz.log" 2>&1
	rc=$?
	grep -E "^(#[0-9]+ *DONE|stat::|Done [0-9]+ runs)" "$bdir/fuzz.log" >&2
	if [ $rc -ne 0 ]; then
		grep -v "^#[0-9]" "$bdir/fuzz.log" | tail -n 80 >&2
		die "the fuzzer found a failure (log: $bdir/fuzz.log," \
		    "input under $3)"
	fi
}

case $cmd in
build)
	build
	;;
regress)
	build
	regress
	;;
fuzz)
	[ $# -eq 1 ] || die "usage: run-fuzz.sh fuzz SECONDS"
	build
	regress
	mkdir -p "$crashes"
	rm -rf "$bdir/fuzz-new"
	fuzz "$1" "$bdir/fuzz-new" "$crashes/"
	# Keep only what adds coverage to the committed corpus.
	"$fuzzer" $fzflags $mergeflags "$corpus" "$bdir/fuzz-new" \
	    >"$bdir/merge.log" 2>&1 || {
		tail -n 40 "$bdir/merge.log" >&2
		die "merging the new inputs failed"
	}
	echo "run-fuzz.sh: corpus now $(ls "$corpus" | wc -l) inputs" >&2
	;;
test)
	[ $# -eq 1 ] || die "usage: run-fuzz.sh test SECONDS"
	build
	regress
	rm -rf "$bdir/test-new" "$bdir/test-crashes"
	mkdir -p "$bdir/test-crashes"
	fuzz "$1" "$bdir/test-new" "$bdir/test-crashes/"
	;;
minimize)
	build
	rm -rf "$bdir/min"
	mkdir -p "$bdir/min"
	cp "$corpus"/seed-* "$bdir/min/" 2>/dev/null
	"$fuzzer" $fzflags $mergeflags "$bdir/min" "$corpus" \
	    >"$bdir/merge.log" 2>&1 || {
		tail -n 40 "$bdir/merge.log" >&2
		die "minimizing failed"
	}
	rm -f "$corpus"/*
	cp "$bdir/min"/* "$corpus/"
	echo "run-fuzz.sh: corpus now $(ls "$corpus" | wc -l) inputs" >&2
	;;
seeds)
	build
	mkdir -p "$corpus"
	DT_FUZZ_SEEDS=$corpus "$fuzzer" >/dev/null 2>&1 ||
	    die "writing the seeds failed"
	ls "$corpus"/seed-* >&2
	;;
repro)
	[ $# -ge 1 ] || die "usage: run-fuzz.sh repro FILE..."
	build
	"$fuzzer" $fzflags -runs=1 "$@" || die "the input fails"
	;;
coverage)
	# Same sources, no sanitizers, clang's source-based coverage.
	cov=$bdir-cov
	if [ ! -f "$cov/build.ninja" ]; then
		mkdir -p "$cov" || die "cannot create $cov"
		CC=clang meson setup "$cov" "$src" --buildtype=debug \
		    -Dwerror=true \
		    -Dc_args="-fprofile-instr-generate -fcoverage-mapping" \
		    -Dc_link_args="-fprofile-instr-generate" \
		    >"$cov.setup.log" 2>&1 || {
			cat "$cov.setup.log" >&2
			die "meson setup of the coverage build failed"
		}
	fi
	ninja -C "$cov" tests/fuzz/dt_dev_fuzz >&2 ||
	    die "building the coverage fuzzer failed"
	rm -rf "$cov/profraw"
	mkdir -p "$cov/profraw"
	LLVM_PROFILE_FILE="$cov/profraw/%p.profraw" \
	    "$cov/tests/fuzz/dt_dev_fuzz" $fzflags -runs=1 "$corpus"/* \
	    >"$cov/replay.log" 2>&1 || die "replay failed (log: $cov/replay.log)"
	llvm-profdata merge -sparse "$cov"/profraw/*.profraw \
	    -o "$cov/dt_dev.profdata" || die "llvm-profdata failed"
	llvm-cov report "$cov/tests/fuzz/dt_dev_fuzz" \
	    -instr-profile="$cov/dt_dev.profdata" "$src/daemon" ||
	    die "llvm-cov failed"
	echo "run-fuzz.sh: line by line: llvm-cov show" \
	    "$cov/tests/fuzz/dt_dev_fuzz -instr-profile=$cov/dt_dev.profdata" \
	    "$src/daemon/core/dt_dev.c" >&2
	;;
*)
	die "unknown command $cmd"
	;;
esac
exit 0
