#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld --check catches what is valid but wrong, and says so as warnings
# (exit status 0) that the start logs too: a Match= that matches no cgroup
# now (with the nearest name), an inline comment, no rules, a hook that
# would not run or that others could replace, an EventLog= the shipped
# unit cannot write. --check -v FILE prints every setting in effect in a
# form the parser reads back; a terminal gets no "<N>" prefixes; a long
# value in an error keeps its start and the fault. The rules match only
# sandbox cgroups; nothing is killed.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
kd_setup check
for d in app.slice/foo.service app.slice/bar.service many; do
	mkcg "$d" || bail_out "cannot create $v2/$box/$d"
done
for i in 1 2 3 4 5 6 7; do
	mkcg "many/unit$i" || bail_out "cannot create $v2/$box/many/unit$i"
done

c=$kd_tmp/c.conf

# run_check [OPTION...]: --check on $c; its output (both streams) in $out,
# its status in $rc.
run_check() {
	out=$("$CGKILLD" --check "$@" "$c" 2>&1)
	rc=$?
}

# warns WHAT LINE [OPTION...]: --check on $c succeeds, counts one warning,
# and logs exactly LINE (after "<4>") as a warning.
warns() {
	local what=$1 line=$2
	shift 2
	run_check "$@"
	[ $rc -eq 0 ] && grep -qxF -- "<4>$line" <<<"$out" && grep -q ", 1 warning(s)$" <<<"$out"
	ok $? "--check warns about $what (exit 0)" || diag "exit $rc, output:" "$out" "wanted: <4>$line"
}

# quiet WHAT: --check on $c succeeds without a warning.
quiet() {
	run_check
	[ $rc -eq 0 ] && ! grep -q '^<4>' <<<"$out" && ! grep -q 'warning' <<<"$out"
	ok $? "--check says nothing about $1" || diag "exit $rc, output:" "$out"
}

rule() {
	printf '[Rule]\nName=r\nMatch=%s\nTrigger=pids-max\n' "$1"
	shift
	printf '%s\n' "$@"
}

# ---- Match= that matches nothing ----

rule "$box/app.slice/*.servce" >"$c"
warns "a typo in a Match= glob, with the nearest name" \
	"$c:1: rule r: Match=$box/app.slice/*.servce matches no cgroup now; did you mean $box/app.slice/*.service? $box/app.slice holds bar.service, foo.service"

rule "$box/app.slce/foo.service" >"$c"
warns "a typo in a component above the last" \
	"$c:1: rule r: Match=$box/app.slce/foo.service matches no cgroup now; did you mean $box/app.slice/foo.service? $box holds app.slice, many"

rule "$box/many/zzz*" >"$c"
warns "a glob nothing is near, listing what is there" \
	"$c:1: rule r: Match=$box/many/zzz* matches no cgroup now; $box/many holds unit1, unit2, unit3, unit4, unit5 and 2 more"

rule "$box/app.slice/foo.service/*" >"$c"
warns "a cgroup that has no children" \
	"$c:1: rule r: Match=$box/app.slice/foo.service/* matches no cgroup now; $box/app.slice/foo.service has no child cgroup"

rule "$box/app.slice/*.service" >"$c"
quiet "a Match= that matches"
rule "$box/many/unit[1-3]" >"$c"
quiet "a Match= whose class matches"

# ---- inline comments ----

rule "$box/app.slice/*.service # my services" >"$c"
run_check
[ $rc -eq 0 ] && grep -qxF "<4>$c:3: Match=$box/app.slice/*.service # my services: \"#\" after a blank is no comment here: it is part of the value (a comment is a line of its own)" <<<"$out"
ok $? "--check warns about an inline # comment, naming file:line (exit 0)" || diag "exit $rc:" "$out"
rule "$box/app.slice/*.service" "$(printf 'ExecPostKill=/bin/true\t# x')" >"$c"
# (the tab shown as "?": the log's text filter)
warns "a tab before #" "$c:5: ExecPostKill=/bin/true?# x: \"#\" after a blank is no comment here: it is part of the value (a comment is a line of its own)"
rule "$box/app.slice/*.service" 'ExecPreKill=/bin/true ; echo' >"$c"
warns "a ; after a blank" "$c:5: ExecPreKill=/bin/true ; echo: \";\" after a blank is no comment here: it is part of the value (a comment is a line of its own)"
rule "$box/app.slice/*.service" '# a comment line' '; another' 'Signal=KILL' >"$c"
quiet "comment lines and a value without a blank before # or ;"

# ---- no rules ----

printf '[Daemon]\nDryRun=no\n' >"$c"
warns "a configuration without rules" "$c: no [Rule]: cgkilld would watch nothing"
: >"$c"
warns "an empty file" "$c: no [Rule]: cgkilld would watch nothing"

# ---- hooks ----

hooks=$kd_tmp/hooks
mkdir -m 755 "$hooks"
printf '#!/bin/sh\nexit 0\n' >"$hooks/good"
chmod 755 "$hooks/good"
install -m 644 "$hooks/good" "$hooks/plain"
install -m 757 "$hooks/good" "$hooks/open"
mkdir -m 777 "$hooks/shared"
install -m 755 "$hooks/good" "$hooks/shared/hook"

rule "$box/app.slice/*.service" "ExecPreKill=$hooks/good --arg" "ExecPostKill=$hooks/good" >"$c"
quiet "hooks that are root's and executable"
rule "$box/app.slice/*.service" "ExecPreKill=/nonexistent/hook" >"$c"
warns "a missing hook" "$c:1: rule r: ExecPreKill=/nonexistent/hook: would not run: /nonexistent: No such file or directory"
rule "$box/app.slice/*.service" "ExecPostKill=$hooks/plain" >"$c"
warns "a hook that is not executable" "$c:1: rule r: ExecPostKill=$hooks/plain: would not run: not executable (mode 0644)"
rule "$box/app.slice/*.service" "ExecPreKill=$hooks" >"$c"
warns "a hook that is a directory" "$c:1: rule r: ExecPreKill=$hooks: would not run: $hooks: not a regular file"
rule "$box/app.slice/*.service" "ExecPreKill=$hooks/open" >"$c"
warns "a hook others may write" "$c:1: rule r: ExecPreKill=$hooks/open: would be refused: someone other than root could replace it: $hooks/open is writable by others (mode 0757)"
rule "$box/app.slice/*.service" "ExecPreKill=$hooks/shared/hook" >"$c"
warns "a hook in a directory others may write" "$c:1: rule r: ExecPreKill=$hooks/shared/hook: would be refused: someone other than root could replace it: $hooks/shared is writable by others (mode 0777)"
chown 65534 "$hooks/good"
rule "$box/app.slice/*.service" "ExecPreKill=$hooks/good" >"$c"
warns "a hook that is not root's" "$c:1: rule r: ExecPreKill=$hooks/good: would be refused: someone other than root could replace it: $hooks/good is owned by uid 65534, not root"
chown 0 "$hooks/good"

# ---- the start logs the same warnings ----

rule "$box/app.slice/*.servce" "ExecPreKill=/nonexistent/hook" >"$c"
if kd_start "$c"; then
	log_has "^<4>$c:1: rule r: Match=$box/app.slice/\*\.servce matches no cgroup now; did you mean $box/app.slice/\*\.service\?" &&
		log_has "^<4>$c:1: rule r: ExecPreKill=/nonexistent/hook: would not run"
	ok $? "the start logs the warnings" || diag "$(cat "$kd_log")"
	alive "$kd_daemon"
	ok $? "the daemon starts in spite of them"
	rule "$box/many/unit[8-9]" >"$c"
	kill -HUP "$kd_daemon"
	wait_log 20 "reloaded: 1 rule" &&
		log_has "^<4>$c:1: rule r: Match=$box/many/unit\[8-9\] matches no cgroup now; did you mean $box/many/unit1\? "
	ok $? "a reload logs them too, and takes the rules" || diag "$(cat "$kd_log")"
	kd_stop
else
	ok 1 "the start logs the warnings"
	ok 1 "the daemon starts in spite of them"
	ok 1 "a reload logs them too, and takes the rules"
fi

# ---- the shipped unit's writable paths ----

rw=$(sed -n 's/^ReadWritePaths=//p' data/cgkilld.service)
grep -qx 'ProtectSystem=strict' data/cgkilld.service && [ -n "$rw" ]
ok $? "the shipped unit has ProtectSystem=strict and ReadWritePaths= ($rw)"
rule "$box/app.slice/*.service" >"$c"
printf '[Daemon]\nEventLog=%s/events.json\n' "$kd_tmp" >>"$c"
warns "an EventLog= outside the unit's writable paths, quoting them from the unit" \
	"$c: EventLog=$kd_tmp/events.json: the shipped unit (cgkilld.service: ProtectSystem=strict, ReadWritePaths=$rw) does not let cgkilld write there; choose a file below those paths, or let the unit write its directory with a drop-in (systemctl edit cgkilld: [Service] ReadWritePaths=$kd_tmp)"
# below each path the unit lets it write: nothing said
for p in $rw; do
	p=${p#[-+]}
	[ -d "$p" ] || continue
	rule "$box/app.slice/*.service" >"$c"
	printf '[Daemon]\nEventLog=%s/cgkill-test-%s.json\n' "$p" "$$" >>"$c"
	run_check
	if [ $rc -eq 1 ] && grep -q "EventLog .*: refused: " <<<"$out"; then
		skip "$p is not a directory the daemon trusts here: $(grep -m1 refused <<<"$out")"
		continue
	fi
	quiet "an EventLog= below the unit's $p"
done

# run at ExecStartPre= inside the unit, where ProtectSystem=strict made
# the directory read-only: refused (as the start would refuse it)
ro=$kd_tmp/ro
mkdir -m 755 "$ro"
rule "$box/app.slice/*.service" >"$c"
printf '[Daemon]\nEventLog=%s/events.json\n' "$ro" >>"$c"
if unshare -m true 2>/dev/null; then
	out=$(unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && exec "$2" --check "$3"' \
		sh "$ro" "$CGKILLD" "$c" 2>&1)
	rc=$?
	[ $rc -eq 1 ] && grep -qF "<3>EventLog $ro/events.json: refused: its directory is on a read-only file system" <<<"$out"
	ok $? "--check refuses an EventLog= on a read-only file system" || diag "exit $rc:" "$out"
else
	skip "unshare -m is not permitted here"
fi

# ---- --check -v FILE: every setting in effect, read back ----

rule "$box/app.slice/*.service" >"$c"
for opts in "-v" "--verbose"; do
	out=$("$CGKILLD" --check $opts "$c" 2>&1) && grep -q "1 rule(s), OK" <<<"$out"
	ok $? "--check $opts FILE is accepted" || diag "$out"
done
out=$("$CGKILLD" --check "$c" -v 2>&1)
ok $? "--check FILE -v is accepted" || diag "$out"

settings() {
	"$CGKILLD" --check -v "$1" 2>/dev/null | sed -n '/^\[Daemon\]$/,$p'
}

settings "$c" >"$kd_tmp/defaults"
grep -qx 'Name=r' "$kd_tmp/defaults" && grep -qx 'PidsMaxEvents=10' "$kd_tmp/defaults" &&
	grep -qx 'PressureLimit=full 60%' "$kd_tmp/defaults" && grep -qx 'PostActionDelay=15s' "$kd_tmp/defaults" &&
	grep -qx 'MaxWatchesPerOwner=1000' "$kd_tmp/defaults" && grep -qx 'Signal=KILL' "$kd_tmp/defaults" &&
	grep -qx 'Backend=auto' "$kd_tmp/defaults" && grep -qx 'Reap=auto' "$kd_tmp/defaults" &&
	grep -qx 'ExecPreKill=' "$kd_tmp/defaults" && grep -qx 'PollInterval=20ms' "$kd_tmp/defaults"
ok $? "--check -v prints the defaults of the keys not set" || diag "$(cat "$kd_tmp/defaults")"
# one Key=value a line for every key of the table (Escalate= too)
keys=$(grep -c '^[A-Za-z]*=' "$kd_tmp/defaults")
[ "$keys" -eq "$(grep -c 'KEY(' daemon/config.c | awk '{ print $1 - 2 }')" ]
ok $? "--check -v prints every key ($keys lines)" || diag "$(grep -c 'KEY(' daemon/config.c) in the table"

{
	printf '[Daemon]\nDryRun=yes\nPollInterval=1500ms\nMaxWatchesPerOwner=infinity\nRealTime=no\n'
	printf '[Rule]\nName=full\nMatch=/%s/app.slice/*.service\nTrigger=oom-kill pids-max memory-pressure\n' "$box"
	printf 'Signal=TERM\nEscalate=90s INT\nEscalate=2min KILL\nPressureLimit=some 30%%\nPressureDuration=1h\n'
	printf 'Victim=memory-growth\nPrefer="a b" c\\*\nAvoid='"'"'q"x'"'"'\nOmit="café au lait" x\nMaxActionsPerMinute=infinity\n'
	printf 'ExecPreKill=%s/good "one arg" '"'"'two\\three'"'"'\nReap=no\nPressureOf=system\n' "$hooks"
	printf '[Rule]\nName=second\nMatch=%s/many/unit1\nTrigger=swap pids-current\nAction=log\nBackend=loop\n' "$box"
} >"$c"
sed -i "s|^Match=/$box/app.slice/\*.service|Match=$box/app.slice/foo.service|" "$c"
settings "$c" >"$kd_tmp/one"
cp "$kd_tmp/one" "$kd_tmp/again.conf"
settings "$kd_tmp/again.conf" >"$kd_tmp/two"
[ -s "$kd_tmp/one" ] && cmp -s "$kd_tmp/one" "$kd_tmp/two"
ok $? "--check -v's output read back gives the same settings" || diag "$(diff "$kd_tmp/one" "$kd_tmp/two")"
for want in 'DryRun=yes' 'PollInterval=1500ms' 'MaxWatchesPerOwner=infinity' 'RealTime=no' \
	"Match=$box/app.slice/foo.service" 'Trigger=pids-max oom-kill memory-pressure' 'Signal=TERM' \
	'Escalate=90s INT' 'Escalate=2min KILL' 'PressureLimit=some 30%' 'PressureDuration=1h' \
	'Victim=memory-growth' 'Prefer="a b" "c\\*"' "Avoid=\"q\\\"x\"" 'Omit="café au lait" x' 'MaxActionsPerMinute=infinity' \
	"ExecPreKill=$hooks/good \"one arg\" \"two\\\\three\"" 'Reap=no' 'PressureOf=system' \
	'Trigger=pids-current swap' 'Action=log' 'Backend=loop'; do
	grep -qxF -- "$want" "$kd_tmp/one" || { bad=$want; break; }
done
ok "$([ -z "${bad:-}" ]; echo $?)" "--check -v prints the values set, quoted where the parser needs it" ||
	diag "missing: $bad" "$(cat "$kd_tmp/one")"

# ---- a terminal gets no "<N>" prefixes ----

printf '[Rule]\nName=r\nMatch=%s/app.slice/*.servce\nTrigger=pids-max\nBogus=1\n' "$box" >"$c"
on_tty=$(python3 -c 'import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))' "$CGKILLD" --check "$c")
grep -q "$c:5: unknown key Bogus" <<<"$on_tty" && ! grep -q '<[0-9]>' <<<"$on_tty"
ok $? "on a terminal the lines have no <N> prefix" || diag "$on_tty"
run_check
grep -q "^<3>$c:5: unknown key Bogus" <<<"$out"
ok $? "on a pipe they keep it (for the journal)" || diag "$out"

# ---- long values in errors ----

long=$(printf 'abcd/%.0s' $(seq 20000))
rule "$box/$long" >"$c"
run_check
line=$(grep "^<3>$c:3: Match=" <<<"$out")
[ $rc -eq 1 ] && grep -q ': trailing slash$' <<<"$line" &&
	grep -q "^<3>$c:3: Match=$box/abcd/abcd/" <<<"$line" &&
	grep -qE '\[\.\.\. [0-9]+ bytes left out of 10[0-9]{4} \.\.\.\]' <<<"$line" && [ ${#line} -lt 1200 ]
ok $? "a 100 kB Match= with its fault at the end: key, file:line, start, fault and length (${#line} bytes)" ||
	diag "exit $rc: ${line:0:300} ... ${line: -300}"
pre=$box/${long:0:50000}
long=${long:50000}
rule "$pre../${long%/}" >"$c"
run_check
line=$(grep "^<3>$c:3: Match=" <<<"$out")
grep -qE ": an empty, \"\\.\" or \"\\.\\.\" component at byte ${#pre}\$" <<<"$line"
ok $? "a fault in the middle of a long Match= is said with its place" || diag "${line: -300}"

done_testing
