#!/bin/bash
# A project rule: files match by their project id, which XFS gives new files
# in a PROJINHERIT directory, wherever the directory is on the filesystem.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"

daemon_xfs somewhere/p other
xfs_io -c 'chproj 4242' -c 'chattr +P' "$M/somewhere/p"
cat >"$CONF" <<CONF
[rule proj]
project = 4242
filesystem = $M
extsize = 64k
inherit = no
CONF
start_daemon "$CONF"
touch "$M/somewhere/p/f" "$M/other/g"
expect_extsize "$M/somewhere/p/f" 65536
mkdir "$M/somewhere/p/sub"
touch "$M/somewhere/p/sub/h"
expect_extsize "$M/somewhere/p/sub/h" 65536
sleep 0.3
extsize_is "$M/other/g" 0 || fail "a file of project 0 was hinted"
stop_daemon
echo ok
