# common/ is the bottom layer: it includes only itself.
$(BUILD)/obj/common/%.o: LAYER_INC = -Icommon
COMMON_SRCS += common/sg_error.c common/log.c common/buf.c common/b64.c common/sha256.c \
               common/httpsrv.c common/httpsrv_head.c common/httpsrv_pool.c \
               common/httpsrv_conns.c common/histogram.c \
               common/json_nesting.c common/json_raw.c common/sg_lang.c common/sg_time.c \
               common/sg_parse.c common/readfile.c common/sg_random.c common/sg_token.c \
               common/sg_file_name.c common/sg_cond.c common/sg_cidr.c \
               common/sg_netallow.c common/membudget.c
