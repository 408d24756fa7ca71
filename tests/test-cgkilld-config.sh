#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's configuration: --check names file:line and what is wrong, and
# exits non-zero on any error (drop-ins in FILE.d/*.conf too); rules whose
# pattern could reach the root cgroup, cgkilld's own cgroup (or one above
# it) or a protected cgroup are refused with the reason; and on SIGHUP a
# bad file is refused while the old rules stay in force, a good one
# replaces them. Only sandbox cgroups are created; the daemon's rules match
# only below the sandbox's unique path.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
kd_setup config
mkcg own || bail_out "cannot create $v2/$box/own"
mkcg jobs/a || bail_out "cannot create $v2/$box/jobs/a"
mkcg keep || bail_out "cannot create $v2/$box/keep"

c=$kd_tmp/c.conf

# expect_error WHAT REGEX: --check on $c fails and says REGEX
expect_error() {
	local out rc
	out=$("$CGKILLD" --check "$c" 2>&1)
	rc=$?
	[ $rc -ne 0 ] && grep -qE -- "$2" <<<"$out"
	ok $? "--check refuses $1" || diag "exit $rc, output:" "$out"
}

printf '[Rule]\nName=ok\nMatch=%s/jobs/*\nTrigger=pids-max oom-kill\nEscalate=2s KILL\nSignal=TERM\n' "$box" >"$c"
check "--check accepts a good rule" "$CGKILLD" --check "$c"

printf '[Rule]\nName=x\nMatch=%s/jobs/*\nTrigger=pids-max\nBogus=1\n' "$box" >"$c"
expect_error "an unknown key, naming file:line" "^<3>$c:5: unknown key Bogus"

printf '# comment\n\n[Rule]\nName=x\nMatch=%s/jobs/*\nTrigger=forks\n' "$box" >"$c"
expect_error "an unknown trigger" "$c:6: .*unknown trigger"

printf '[Rule]\nName=x\nMatch=%s/jobs/*\nTrigger=pids-max\nPidsWindow=soon\nSignal=NOPE\n' "$box" >"$c"
expect_error "a bad time span" "$c:5: PidsWindow=soon"
expect_error "a bad signal, in the same run" "$c:6: Signal=NOPE"

printf '[Rule]\nName=x\nTrigger=pids-max\n' >"$c"
expect_error "a rule without Match=" "$c:1: rule x: no Match="

printf '[Nope]\nA=b\n' >"$c"
expect_error "an unknown section" "$c:1: unknown section"

printf 'Name=x\n' >"$c"
expect_error "a key outside a section" "$c:1: .*outside a section"

printf '[Rule]\nName=x\nMatch=%s/../x\nTrigger=pids-max\n' "$box" >"$c"
expect_error "a .. component" "$c:3: Match=.*\"\\.\\.\""

printf '[Rule]\nName=x\nMatch=/\nTrigger=pids-max\n' >"$c"
expect_error "the root cgroup" "root cgroup"

# the machine's pressure or swap, on a glob: one event, every match acts
printf '[Rule]\nName=x\nMatch=%s/*\nTrigger=memory-pressure\nPressureOf=system\nPressureLimit=full 20%%\nPressureDuration=2s\nVictim=memory\n' "$box" >"$c"
expect_error "PressureOf=system with a glob" "$c:1: rule x: the machine's pressure .* with a Match= glob would act in every matched cgroup"
printf '[Rule]\nName=x\nMatch=%s/u*\nTrigger=swap\n' "$box" >"$c"
expect_error "Trigger=swap with a glob" "$c:1: rule x: the machine's pressure .* or swap with a Match= glob"
printf '[Rule]\nName=x\nMatch=%s/user.slice\nTrigger=memory-pressure swap\nPressureOf=system\nPressureDuration=2s\nVictim=memory\n' "$box" >"$c"
check "--check accepts the machine's pressure and swap on one cgroup" "$CGKILLD" --check "$c"
printf '[Rule]\nName=x\nMatch=%s/jobs/*\nTrigger=pids-max\nExecPreKill=/bin/true\nExecTimeout=2min\n' "$box" >"$c"
expect_error "a hook timeout over 1min" "$c:6: ExecTimeout=2min: must be more than 0 and at most 1min"

printf '[Rule]\nName=x\nMatch=%s/jobs/*\nTrigger=pids-max\n[Rule]\nName=x\nMatch=%s/*\nTrigger=oom-kill\n' "$box" "$box" >"$c"
expect_error "a rule name defined twice" "$c:5: rule x: already defined at $c:1"

# drop-ins: FILE.d/*.conf, in order, each error with its own file name
printf '[Rule]\nName=main\nMatch=%s/jobs/*\nTrigger=pids-max\n' "$box" >"$c"
mkdir -p "$c.d"
printf '[Rule]\nName=drop\nMatch=%s/jobs/*\nTrigger=oom-kill\n' "$box" >"$c.d/10-good.conf"
printf 'ignored, not .conf\n' >"$c.d/README"
out=$("$CGKILLD" --check "$c" 2>&1)
grep -q "2 rule(s), OK" <<<"$out"
ok $? "--check reads FILE.d/*.conf beside FILE" || diag "$out"
printf '[Daemon]\nDryRun=maybe\n' >"$c.d/20-bad.conf"
expect_error "a bad drop-in, naming its file" "$c.d/20-bad.conf:2: DryRun=maybe"
rm -rf "$c.d"

# guard rails at --check and load, with the reason
prot=$kd_tmp/protected
printf '# test list\n/%s/keep\n' "$box" >"$prot"
printf '[Daemon]\nProtectedFile=%s\n[Rule]\nName=wide\nMatch=%s/*\nTrigger=pids-max\n' "$prot" "$box" >"$c"
expect_error "a rule that could match a protected cgroup" "rule wide: Match=$box/\\* refused: it could match the protected cgroup /$box/keep"
printf '[Daemon]\nProtectedFile=%s\n[Rule]\nName=narrow\nMatch=%s/jobs/*\nTrigger=pids-max\n' "$prot" "$box" >"$c"
check "--check accepts a rule beside the protected cgroup" "$CGKILLD" --check "$c"
# the list is read by the library, by the rules of cgk_kill(): a '#'
# inside a name is part of it, a NUL byte or a ".." component fails closed
printf '/%s/jobs/a#1\n/%s/x#y\n' "$box" "$box" >"$prot"
printf '[Daemon]\nProtectedFile=%s\n[Rule]\nName=wide\nMatch=%s/jobs/*\nTrigger=pids-max\n' "$prot" "$box" >"$c"
expect_error "a rule that could match a protected name with '#' in it" "refused: it could match the protected cgroup /$box/jobs/a#1 or one above it \\($prot\\)"
printf '[Daemon]\nProtectedFile=%s\n[Rule]\nName=x\nMatch=%s/x\nTrigger=pids-max\n' "$prot" "$box" >"$c"
check "--check accepts $box/x beside the protected $box/x#y" "$CGKILLD" --check "$c"
printf '/%s/keep\n/x\0y\n' "$box" >"$prot"
printf '[Daemon]\nProtectedFile=%s\n[Rule]\nName=narrow\nMatch=%s/jobs/*\nTrigger=pids-max\n' "$prot" "$box" >"$c"
expect_error "a protected list with a NUL byte" "refused: $prot:2: a NUL byte in the line"
printf '/%s/keep\n/x/../%s/jobs\n' "$box" "$box" >"$prot"
expect_error "a protected list with a .. component" "refused: $prot:2: a \"\\.\\.\" component in the entry"
printf '[Rule]\nName=sys\nMatch=*\nTrigger=pids-max\n' >"$c"
CGKILL_PROTECTED=$kd_tmp/none expect_error "Match=* (the built-in protected list: /system.slice ...)" "refused: it could match the protected cgroup /(init|system|user|machine)"

# our own cgroup: --check run from inside box/own
check_in_own() {
	sh -c "echo \$\$ >'$v2/$box/own/cgroup.procs' && exec \"\$@\"" sh "$CGKILLD" --check "$c" 2>&1
}
printf '[Rule]\nName=self\nMatch=%s/own\nTrigger=pids-max\n' "$box" >"$c"
out=$(check_in_own)
[ $? -ne 0 ] && grep -q "rule self: Match=$box/own refused: it could match cgkilld's own cgroup /$box/own" <<<"$out"
ok $? "--check refuses a rule on its own cgroup" || diag "$out"
printf '[Rule]\nName=above\nMatch=%s\nTrigger=pids-max\n' "$box" >"$c"
out=$(check_in_own)
[ $? -ne 0 ] && grep -q "refused: it could match cgkilld's own cgroup" <<<"$out"
ok $? "--check refuses a rule on a cgroup above its own" || diag "$out"
printf '[Rule]\nName=siblings\nMatch=%s/*\nTrigger=pids-max\n' "$box" >"$c"
out=$(check_in_own)
ok $? "--check accepts a glob that matches its own cgroup among others (never watched)" || diag "$out"

# SIGHUP: a bad file is refused and the old rules stay; a good one replaces them
printf '[Rule]\nName=first\nMatch=%s/jobs/*\nTrigger=pids-max\n' "$box" >"$c"
kd_start "$c" || bail_out "cgkilld did not start"
st=$(dump)
grep -q "rule first: match $box/jobs/\*, 1 cgroup(s)" <<<"$st"
ok $? "the daemon runs rule first on box/jobs/a" || diag "$st"
printf '[Rule]\nName=second\nMatch=%s/jobs/*\nTrigger=pids-max\nAction=explode\n' "$box" >"$c"
kill -HUP "$kd_daemon"
wait_log 20 'reload refused.*old rules stay'
ok $? "a reload with a bad file is refused, and the log says the old rules stay"
log_has "^<3>$c:5: Action=explode"
ok $? "the log names the bad file's line"
st=$(dump)
grep -q "rule first: match $box/jobs/\*, 1 cgroup(s)" <<<"$st" && ! grep -q "rule second" <<<"$st"
ok $? "the old rule is still in force" || diag "$st"
alive "$kd_daemon"
ok $? "the daemon lives"
printf '[Rule]\nName=second\nMatch=%s/jobs/*\nTrigger=oom-kill\n[Rule]\nName=third\nMatch=%s/own\nTrigger=pids-max\n' "$box" "$box" >"$c"
kill -HUP "$kd_daemon"
wait_log 20 'reloaded: 2 rule'
ok $? "a reload with a good file is taken"
st=$(dump)
grep -q "rule second: match $box/jobs/\*, 1 cgroup(s)" <<<"$st" &&
	grep -q "rule third: match $box/own, 1 cgroup(s)" <<<"$st" && ! grep -q "rule first" <<<"$st"
ok $? "the new rules replace the old" || diag "$st"
kd_stop

# a bad file at start: nothing starts
printf '[Rule]\nName=x\n' >"$c"
"$CGKILLD" --foreground --config "$c" 2>"$kd_tmp/bad.log"
rc=$?
[ $rc -ne 0 ] && grep -q "not starting" "$kd_tmp/bad.log"
ok $? "with a bad configuration the daemon does not start (exit $rc)"
# The rule files users copy: the example the packages ship, and the
# README's.
# (copied into the scratch directory: the daemon trusts only files that
# root alone can write, all the way up, which a checkout need not be)
cp data/cgkilld.conf.example "$kd_tmp/example.conf" || bail_out "cannot copy the example"
check "--check accepts data/cgkilld.conf.example" "$CGKILLD" --check "$kd_tmp/example.conf"
awk '/^```ini/ { f = 1; next } /^```/ { f = 0 } f' README.md >"$kd_tmp/readme.conf"
[ -s "$kd_tmp/readme.conf" ] && "$CGKILLD" --check "$kd_tmp/readme.conf" >/dev/null
ok $? "--check accepts the README's rule file"

done_testing
