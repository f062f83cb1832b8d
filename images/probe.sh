#!/bin/bash
# sandgate-probe PORT PATH - container healthcheck without curl: one HTTP/1.0
# GET to 127.0.0.1:PORT over bash's /dev/tcp; exit 0 on status 200 only.
set -u
port=${1:?usage: sandgate-probe PORT PATH}
path=${2:-/healthz}
exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' "$path" >&3
IFS= read -r -t 5 status <&3 || exit 1
exec 3>&-
case $status in
    "HTTP/1."?" 200 "*) exit 0 ;;
    *) echo "sandgate-probe: $status" >&2; exit 1 ;;
esac
