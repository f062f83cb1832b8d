#!/bin/bash
# sandgate-reload [PORT] - reload the gateway's policies and tokens from inside
# its container (`make reload` runs it with docker exec). It signals the daemon
# (PID 1) itself, so Docker never sees a signal sent through `docker kill`,
# which would mark the container as stopped by hand and switch its restart
# policy off. Then it waits for the outcome in /metrics: exit 0 when the reload
# was applied, 1 when the gateway refused it (the old set stays; the log says
# why) or no outcome came within 10 s.
set -u
port=${1:-${SANDGATE_PORT:-9385}}

reloads() {  # prints "ok failed" from sandgate_reloads_total
    local line ok=x failed=x
    exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
    printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
    while IFS= read -r -t 5 line <&3; do
        case $line in
            'sandgate_reloads_total{result="ok"} '*) ok=${line##* } ;;
            'sandgate_reloads_total{result="failed"} '*) failed=${line##* } ;;
        esac
    done
    exec 3>&-
    echo "${ok%$'\r'} ${failed%$'\r'}"
}

[ "$(cat /proc/1/comm 2>/dev/null)" = sandgate ] || {
    echo "sandgate-reload: PID 1 is not sandgate" >&2; exit 1; }
before=$(reloads) || { echo "sandgate-reload: gateway not answering on $port" >&2; exit 1; }
kill -HUP 1 || exit 1
for _ in $(seq 100); do
    after=$(reloads) || after=$before
    if [ "${after% *}" != "${before% *}" ]; then echo "sandgate-reload: reloaded"; exit 0; fi
    if [ "${after#* }" != "${before#* }" ]; then
        echo "sandgate-reload: refused, the previous policies and tokens stay (see the log)" >&2
        exit 1
    fi
    sleep 0.1
done
echo "sandgate-reload: no reload outcome within 10 s" >&2
exit 1
