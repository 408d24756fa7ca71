#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The licences agree everywhere: COPYING.LGPL-2.1 and COPYING.GPL-2 are the
# licence texts, every SPDX-License-Identifier of the tree is one of the two,
# and debian/copyright (DEP-5: the last Files stanza that matches wins) gives
# each file the licence its tag says, with no stanza that matches nothing.
cd "${0%/*}/.." || exit 1
. tests/tap.sh

command -v python3 >/dev/null || skip_all "python3 not installed"

for f in COPYING COPYING.LGPL-2.1 COPYING.GPL-2; do
	[ -s "$f" ]
	ok $? "$f is there"
done
for pair in LGPL-2.1:COPYING.LGPL-2.1 GPL-2:COPYING.GPL-2; do
	common=/usr/share/common-licenses/${pair%%:*}
	if [ -r "$common" ]; then
		cmp -s "$common" "${pair#*:}"
		ok $? "${pair#*:} is $common"
	else
		skip "$common not here"
	fi
done
# (release tarballs leave debian/ out: see .gitattributes)
for path in $(sed -n 's/^    //p' COPYING | tr -d ,); do
	[ "$path" = debian/ ] && [ ! -d debian ] && continue
	[ -e "$path" ]
	ok $? "COPYING names $path, which exists"
done

# The files of the tree: no build output, no VCS data, nothing a package
# build leaves under debian/.
files=$(find . -type f ! -path './.git/*' ! -path './build*' \
	! -path './bench/results/*' ! -path './debian/.debhelper/*' ! -path './debian/tmp/*' \
	! -path './debian/cgkill/*' ! -path './debian/libcgkill*/*' ! -path './debian/*-dbgsym/*' \
	! -name '*.o' ! -name '*.debhelper*' ! -name '*.substvars' ! -name debhelper-build-stamp \
	! -name files | sed 's|^\./||' | sort)

out=$(python3 - "$files" <<'END'
import re, sys
from fnmatch import fnmatchcase

spdx = {'LGPL-2.1-or-later': 'LGPL-2.1+', 'GPL-2.0-or-later': 'GPL-2+'}
files = sys.argv[1].split('\n')

stanzas = []
try:
    copyright = open('debian/copyright').read()
except FileNotFoundError:
    copyright = ''
for para in copyright.split('\n\n'):
    fields = dict(re.findall(r'^(Files|License): *(\S.*)$', para, re.M))
    if 'Files' in fields:
        stanzas.append((fields['Files'].split(), fields['License']))

def licence_of(path):
    found = None
    for patterns, licence in stanzas:
        if any(fnmatchcase(path, p) for p in patterns):
            found = licence
    return found

tested = 0
for path in files:
    try:
        head = open(path, errors='replace').read(1000).split('\n')[:5]
    except OSError:
        continue
    tags = [m.group(1) for line in head
            for m in [re.search(r'SPDX-License-Identifier: *(\S+)', line)] if m]
    if not tags:
        continue
    tested += 1
    tag = tags[0]
    if tag not in spdx:
        print(f'not ok {path}: SPDX tag {tag} is neither of {", ".join(spdx)}')
    elif stanzas and licence_of(path) != spdx[tag]:
        print(f'not ok {path}: SPDX tag {tag}, debian/copyright says {licence_of(path)}')
print(f'tagged {tested}')
for patterns, licence in stanzas:
    for p in patterns:
        if not any(fnmatchcase(f, p) for f in files):
            print(f'stale debian/copyright: Files: {p} matches no file')
END
)
ok $? "python3 reads debian/copyright and the SPDX tags"
tagged=$(sed -n 's/^tagged //p' <<<"$out")
[ "${tagged:-0}" -gt 30 ]
ok $? "$tagged files carry an SPDX-License-Identifier"
bad=$(grep '^not ok' <<<"$out")
[ -z "$bad" ]
ok $? "every SPDX tag is LGPL-2.1-or-later or GPL-2.0-or-later, as debian/copyright says" ||
	diag "$bad"
stale=$(grep '^stale' <<<"$out")
[ -z "$stale" ]
ok $? "every Files pattern of debian/copyright matches a file" || diag "$stale"

done_testing
