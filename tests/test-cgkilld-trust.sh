#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What cgkilld trusts as root (issue 26, items 11 and 12).
# Configuration: the file, each conf.d drop-in, the conf.d directory and
# every directory above must be root's and writable by no one else (a sticky
# directory on the way, /tmp, may be); a symlink is followed only if it is
# root's, and its target is checked the same way. --check says what the
# start says.
# - a 0666 drop-in whose ExecPreKill= would create a marker file is refused
#   by --check and at start, and the marker is never made (the old daemon
#   ran it as root on the first bomb);
# - a drop-in owned by another user, a drop-in symlink to a 0666 file, a
#   symlink owned by another user, a conf.d writable by others (even
#   sticky), a config directory writable by its group: refused;
# - a root-owned symlink to a good file, and the good configuration, load;
# - a ProtectedFile= that others can write is refused, a root's 0644 one
#   taken.
# EventLog=: opened without following a symlink, only a regular file, in a
# directory only root may change, at start and at each reload:
# - a symlink planted at the path: the target is neither created nor
#   appended to, at start nor at reload; the daemon starts and guards;
# - a FIFO at the path does not block the start;
# - a directory writable by others: refused;
# - a regular file in a good directory still gets the events.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup trust
PMAX=8

kd_first pids evil/x $PMAX
mkcg jobs/x $PMAX || bail_out "cannot create box/jobs/x"
mkcg jobs/y $PMAX || bail_out "cannot create box/jobs/y"
mkcg other || bail_out "cannot create box/other"
sentinel other || bail_out "no sentinel in other"
sent_other=$started

nobody=$(id -u nobody 2>/dev/null || echo 65534)
d=$kd_tmp/etc
mkdir -m 755 "$d"
conf=$d/cgkilld.conf
drop=$conf.d
mkdir -m 755 "$drop"
events=$d/events.json
marker=$kd_tmp/marker
cat >"$conf" <<EOF
[Daemon]
PollInterval=20ms
EventLog=$events

[Rule]
Name=jobs
Match=$box/jobs/*
Trigger=pids-max
PidsMaxEvents=5
Action=kill
Wait=20s
EOF
chmod 644 "$conf"
evil_rule() {
	cat <<EOF
[Rule]
Name=evil
Match=$box/evil/*
Trigger=pids-max
PidsMaxEvents=5
Action=kill
Wait=20s
ExecPreKill=/bin/sh -c ': >$marker'
EOF
}

# check WHAT REGEX: --check refuses, and says REGEX on stderr
refused() {
	local what=$1 re=$2 out
	out=$("$CGKILLD" --check "$conf" 2>&1)
	if [ $? -ne 0 ] && grep -qE -- "$re" <<<"$out"; then
		ok 0 "--check refuses $what"
	else
		ok 1 "--check refuses $what" || diag "$out"
	fi
}

"$CGKILLD" --check "$conf" >/dev/null 2>&1
ok $? "--check accepts the good configuration"

# ---- a drop-in others can write, that would run a program as root ----
evil_rule >"$drop/evil.conf"
chmod 666 "$drop/evil.conf"
refused "a drop-in of mode 0666" "evil.conf: refused: .* is writable by others \(mode 0666\)"
# the start says the same, and does not start; if it did, a bomb in
# box/evil/x would make root run the drop-in's hook
kd_log=$kd_tmp/start.log
"$CGKILLD" --foreground -v --config "$conf" --runtime-dir "$kd_tmp/run" 2>"$kd_log" &
kd_daemon=$!
wait_for 30 "cgkilld to end or start" eval '! alive '"$kd_daemon"' || grep -qs "started:" "$kd_log"'
if alive "$kd_daemon"; then
	ok 1 "the daemon refuses to start with that drop-in"
	start_in evil/x "$FORKBOMB"
	wait_for 20 "the marker" test -e "$marker"
	kd_stop
else
	wait "$kd_daemon"
	rc=$?
	kd_daemon=
	[ $rc -ne 0 ] && grep -qE "^<3>.*evil.conf: refused: .* writable by others" "$kd_log"
	ok $? "the daemon refuses to start with that drop-in, and says why (status $rc)"
fi
[ ! -e "$marker" ]
ok $? "the drop-in's ExecPreKill= never ran as root"
rm -f "$marker"

# ---- owner, symlinks, directories ----
chmod 644 "$drop/evil.conf"
chown "$nobody" "$drop/evil.conf"
refused "a drop-in owned by uid $nobody" "evil.conf: refused: .* is owned by uid $nobody, not root"
chown 0 "$drop/evil.conf"
mv "$drop/evil.conf" "$kd_tmp/evil.conf"
ln -s "$kd_tmp/evil.conf" "$drop/link.conf"
"$CGKILLD" --check "$conf" >/dev/null 2>&1
ok $? "a root-owned drop-in symlink to a good file loads"
chmod 666 "$kd_tmp/evil.conf"
refused "a drop-in symlink to a file of mode 0666" "link.conf: refused: $kd_tmp/evil.conf is writable by others"
chmod 644 "$kd_tmp/evil.conf"
chown -h "$nobody" "$drop/link.conf"
refused "a drop-in symlink owned by uid $nobody" "link.conf: refused: .*link.conf is owned by uid $nobody"
rm -f "$drop/link.conf" "$kd_tmp/evil.conf"
chmod 1777 "$drop"
refused "a conf.d writable by others, even sticky" "cgkilld.conf.d: refused: .* is writable by others \(mode 1777\)"
chmod 755 "$drop"
chmod 775 "$d"
refused "a configuration directory writable by its group" "refused: $d is writable by its group \(mode 0775\)"
chmod 755 "$d"
chmod 664 "$conf"
refused "a configuration file writable by its group" "cgkilld.conf: refused: .* is writable by its group"
chmod 644 "$conf"
# the protected list says what root never kills: one others can write
# would un-protect anything
prot=$d/protected
printf '/elsewhere/keep\n' >"$prot"
chmod 666 "$prot"
printf '[Daemon]\nProtectedFile=%s\n' "$prot" >"$drop/prot.conf"
refused "a ProtectedFile= of mode 0666" "refused as the protected list: .*protected is writable by others \(mode 0666\)"
chmod 644 "$prot"
"$CGKILLD" --check "$conf" >/dev/null 2>&1
ok $? "a root-owned protected list of mode 0644 is taken"
rm -f "$drop/prot.conf" "$prot"
"$CGKILLD" --check "$conf" >/dev/null 2>&1
ok $? "the good configuration loads again"

# ---- EventLog= ----
target=$kd_tmp/chosen
rm -f "$events"
ln -s "$target" "$events"
refused "an EventLog= that is a symlink" "EventLog $events: refused: a symlink"
kd_start "$conf" || bail_out "cgkilld did not start"
ok 0 "the daemon starts with EventLog= a symlink"
log_has "^<3>EventLog $events: refused: a symlink"
ok $? "and logs that EventLog= is refused"
[ ! -e "$target" ]
ok $? "root did not create the symlink's target"
kill -HUP "$kd_daemon"
wait_log 20 'reloaded:'
[ ! -e "$target" ]
ok $? "nor at a reload"
start_in jobs/x "$FORKBOMB"
wait_for 60 "box/jobs/x empty" empty jobs/x
ok $? "the daemon still guards: box/jobs/x is emptied"
[ ! -e "$target" ]
ok $? "and the event went to no file"
rm -f "$events"
: >"$target"
ln -s "$target" "$events"
kill -HUP "$kd_daemon"
wait_for 20 "the second reload" eval '[ "$(grep -c reloaded: "$kd_log")" -ge 2 ]'
start_in jobs/y "$FORKBOMB"
wait_for 60 "box/jobs/y empty" empty jobs/y
wait_log 20 "^<4>rule jobs: .*/jobs/y: pids-max"
[ ! -s "$target" ]
ok $? "a symlink planted before a reload to an existing file: nothing appended"
kd_stop
rm -f "$events" "$target"

mkfifo -m 600 "$events"
kd_start "$conf"
ok $? "a FIFO at EventLog= does not block the start"
log_has "^<3>EventLog $events: refused: not a regular file"
ok $? "and is refused"
kd_stop
rm -f "$events"

mkdir -m 1777 "$kd_tmp/open"
sed -i "s|^EventLog=.*|EventLog=$kd_tmp/open/events.json|" "$conf"
refused "an EventLog= in a directory writable by others" "EventLog .*: refused: $kd_tmp/open is writable by others"
kd_start "$conf" || bail_out "cgkilld did not start"
log_has "^<3>EventLog $kd_tmp/open/events.json: refused: $kd_tmp/open is writable by others"
ok $? "the start refuses it too"
[ ! -e "$kd_tmp/open/events.json" ]
ok $? "and creates nothing there"
kd_stop

sed -i "s|^EventLog=.*|EventLog=$events|" "$conf"
kd_start "$conf" || bail_out "cgkilld did not start"
mkcg jobs/z $PMAX || bail_out "cannot create box/jobs/z"
start_in jobs/z "$FORKBOMB"
wait_for 60 "box/jobs/z empty" empty jobs/z
wait_for 20 "the JSON event" test -s "$events"
ok $? "a regular EventLog= in a good directory gets the event"
[ "$(stat -c %F "$events")" = "regular file" ]
ok $? "(a regular file)"
alive "$sent_other"
ok $? "the sentinel in box/other lives"
alive "$kd_daemon"
ok $? "the daemon lives"

done_testing
