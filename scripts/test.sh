#!/bin/sh
# Set up and run userdt's whole test suite: unit, man (mandoc -Tlint),
# integration, regress, fuzz, vm (the CUSE front end inside a QEMU guest),
# install (meson install into a DESTDIR, run from there) and package (the
# Debian packages, built and run).  Two configurations: the release build
# runs every suite; the ASan/UBSan build runs the suites whose programs can
# carry sanitizers (the VM's static binaries and the fuzzer's own clang
# build cannot; installed and packaged programs are release builds; the
# timing suite's exact counts need dtd at its release speed).  Exits non-zero if anything fails or cannot run.
#
# The suites run on a copy of the tree (the files git tracks or would
# track, as they are in the work tree) in build-alone/userdt, a directory
# with nothing beside it: a build or a test that reaches outside the
# repository (../shared, say) fails here as it would in a newcomer's
# clone.  Files that did not change keep their copies' times, so ninja
# rebuilds only what changed.
set -eu
cd "$(dirname "$0")/.."

./scripts/deps.sh

if [ "${USERDT_ALONE:-}" != 1 ]; then
	alone=build-alone
	mkdir -p "$alone/userdt"
	git ls-files -co --exclude-standard | while IFS= read -r f; do
		[ ! -f "$f" ] || printf '%s\n' "$f"; done | sort >"$alone/want"
	(cd "$alone/userdt" && find . -type f ! -path './build*' |
	    sed 's|^\./||' | sort) >"$alone/have"
	comm -13 "$alone/want" "$alone/have" | (cd "$alone/userdt" &&
	    tr '\n' '\0' | xargs -0r rm -f --)
	# Only what differs, stamped now: a file changed while an earlier
	# run was building keeps an older time than that run's objects, and
	# ninja, trusting times, would keep objects built from its old text.
	tr '\n' '\0' <"$alone/want" | xargs -0r sh -c 'for f; do
		cmp -s "$f" "$0/$f" ||
		    cp --preserve=mode --parents -t "$0" "$f" || exit 1
	done' "$alone/userdt"
	rm -f "$alone/want" "$alone/have"
	[ ! -e "$alone/shared" ] || { echo "test.sh: $alone/shared must not exist" >&2; exit 1; }
	cd "$alone/userdt"
	USERDT_ALONE=1 exec ./scripts/test.sh
fi

setup() {
	dir=$1; shift
	if [ -f "$dir/build.ninja" ]; then
		meson configure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi
	ninja -C "$dir" >/dev/null
}

setup build -Dwerror=true
setup build-san -Dwerror=true -Db_sanitize=address,undefined \
	-Db_lundef=false

status=0
meson test -C build --print-errorlogs --num-processes 1 || status=1
meson test -C build-san --print-errorlogs --num-processes 1 \
	--suite unit --suite integration --suite regress || status=1

# One closing line over both configurations.  A skipped test fails the
# run: here every suite must run (meson alone would pass a skip).  Each
# failed test's failing checks again, so that a log cut in the middle
# still says at its end what failed and why.
python3 - build/meson-logs/testlog.json build-san/meson-logs/testlog.json <<'PY' || status=1
import json, re, sys
ok = bad = 0
why = re.compile(r"^(not ok|FAIL|VMTEST-RESULT|.*(error|Error|ERROR|"
                 r"Assertion|Traceback|runtime error))")
for path in sys.argv[1:]:
    for line in open(path):
        r = json.loads(line)
        if r["result"] in ("OK", "EXPECTEDFAIL"):
            ok += 1
            continue
        bad += 1
        print("failed: %s (%s) in %s" % (r["name"], r["result"], path))
        out = (r.get("stdout") or "") + (r.get("stderr") or "")
        hits = [l for l in out.splitlines() if why.match(l)]
        for l in hits[:12]:
            print("    " + l[:300])
        if len(hits) > 12:
            print("    ... %d more" % (len(hits) - 12))
print("%d passed, %d failed" % (ok, bad))
sys.exit(1 if bad else 0)
PY
exit $status
