#!/bin/sh
# Adds Debian's backports suite of this machine's release to apt, from the Debian source apt
# already uses (README command 2 installs qemu-system-x86 from it: the QEMU test guest needs
# QEMU >= 10.0, Debian 12 has 7.2 and bookworm-backports 10.0.2). Nothing else comes from
# backports unless asked for by name (apt pins backports below the release).
#
# The source is found in apt's own configuration: a deb822 stanza (sources.list.d/*.sources)
# or a one-line entry (sources.list, sources.list.d/*.list) of type deb whose suite is the
# release's codename (VERSION_CODENAME of os-release); its first URI (and its Signed-By, if a
# keyring file) is used for "<codename>-backports", component main, written to
# sources.list.d/snia-pts-backports.sources. No mirror is written anywhere else.
# Idempotent: the same file again on every run; nothing when a source of the backports
# suite is already configured. Exit 1 with the reason when no Debian source is found.
#
# Environment (for tests): APT_ETC (default /etc/apt), OS_RELEASE (default /etc/os-release).
set -eu

ETC=${APT_ETC:-/etc/apt}
OSR=${OS_RELEASE:-/etc/os-release}
OURS=$ETC/sources.list.d/snia-pts-backports.sources

fail() { echo "backports.sh: $*" >&2; exit 1; }

[ -r "$OSR" ] || fail "cannot read $OSR (the release's codename): not a Debian system?"
CODENAME=$(sed -n 's/^VERSION_CODENAME=["]*\([a-z]*\)["]*$/\1/p' "$OSR" | head -n 1)
[ -n "$CODENAME" ] || fail "no VERSION_CODENAME in $OSR: not a Debian release with backports"
SUITE=$CODENAME-backports

# Every configured source but ours, as "URI SUITE SIGNED-BY" lines ("-": no keyring file).
sources() {
    for f in "$ETC"/sources.list.d/*.sources; do
        [ -f "$f" ] && [ "$f" != "$OURS" ] || continue
        awk '
            function flush() {
                if (types ~ /(^| )deb( |$)/ && enabled != "no")
                    for (i = 1; i <= ns; i++) print uri, s[i], (sb == "" ? "-" : sb)
                types = ""; uri = ""; ns = 0; sb = ""; enabled = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            /^[ \t]/ { next }                         # continuation (an inline key)
            {
                key = tolower($1); sub(/:$/, "", key)
                val = $0; sub(/^[^:]*:[ \t]*/, "", val)
                if (key == "types") types = val
                else if (key == "uris") { split(val, u, /[ \t]+/); uri = u[1] }
                else if (key == "suites") ns = split(val, s, /[ \t]+/)
                else if (key == "enabled") enabled = tolower(val)
                else if (key == "signed-by" && val ~ /^\//) sb = val
            }
            END { flush() }' "$f"
    done
    for f in "$ETC"/sources.list "$ETC"/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk '
            $1 != "deb" { next }
            {
                sb = "-"; i = 2
                if ($2 ~ /^\[/) {                     # [ option=value ... ]
                    while (i <= NF) {
                        o = $i; gsub(/[][]/, "", o)
                        if (o ~ /^signed-by=\//) { sb = o; sub(/^signed-by=/, "", sb) }
                        if ($i ~ /\]$/) { i++; break }
                        i++
                    }
                }
                print $i, $(i + 1), sb
            }' "$f"
    done
}

if sources | awk -v s="$SUITE" '$2 == s { found = 1 } END { exit !found }'; then
    echo "backports.sh: $SUITE is already configured; nothing written"
    exit 0
fi
LINE=$(sources | awk -v s="$CODENAME" '$2 == s { print; exit }')
[ -n "$LINE" ] || fail "no Debian source of suite $CODENAME in $ETC/sources.list or \
$ETC/sources.list.d/ (deb822 .sources or one-line .list): add the Debian archive to apt first"
URI=${LINE%% *}
KEY=${LINE##* }

TMP=$OURS.tmp
{
    echo "# Written by snia-pts .ci/backports.sh from the $CODENAME source apt already uses."
    echo "Types: deb"
    echo "URIs: $URI"
    echo "Suites: $SUITE"
    echo "Components: main"
    [ "$KEY" = "-" ] || echo "Signed-By: $KEY"
} > "$TMP"
if cmp -s "$TMP" "$OURS"; then
    rm -f "$TMP"
    echo "backports.sh: $OURS unchanged ($URI $SUITE)"
else
    mv "$TMP" "$OURS"
    echo "backports.sh: wrote $OURS ($URI $SUITE)"
fi
