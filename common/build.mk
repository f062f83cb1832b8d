COMMON_SRCS += common/sg_error.c common/log.c common/buf.c common/b64.c common/sha256.c \
               common/httpsrv.c common/histogram.c \
               common/json_nesting.c common/json_raw.c
