#!/usr/bin/env bash
# fetch-grammar.sh NAME VERSION INTEGRITY OUTDIR
# Fetches an npm-published tree-sitter grammar with `npm pack`, checks the
# tarball against the pinned integrity (sha512, npm's "dist.integrity" form)
# and unpacks it into OUTDIR/NAME. Grammar sources are never committed.
set -euo pipefail
name=$1 version=$2 integrity=$3 outdir=$4
mkdir -p "$outdir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
( cd "$tmp" && npm pack --silent "$name@$version" >/dev/null 2>npm.err ) || {
    cat "$tmp/npm.err" >&2; echo "fetch-grammar: npm pack $name@$version failed" >&2; exit 1; }
tgz=$(ls "$tmp"/*.tgz)
actual="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
if [ "$actual" != "$integrity" ]; then
    echo "fetch-grammar: integrity mismatch for $name@$version" >&2
    echo "  expected $integrity" >&2
    echo "  got      $actual" >&2
    exit 1
fi
rm -rf "${outdir:?}/$name"
mkdir -p "$outdir/$name"
tar -xzf "$tgz" -C "$outdir/$name" --strip-components=1 package/src package/LICENSE package/package.json
echo "fetch-grammar: $name@$version verified ($integrity)"
