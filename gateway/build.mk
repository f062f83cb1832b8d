# gateway: the sandgate daemon. Everything but main.c goes into the library so
# unit tests and fuzz targets can link the modules.
GATEWAY_SRCS += gateway/gw_util.c gateway/gw_config.c gateway/gw_tenants.c gateway/gw_ratelimit.c \
                gateway/gw_request.c
