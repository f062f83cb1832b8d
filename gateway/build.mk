# gateway: the sandgate daemon. Everything but main.c and audit_main.c goes
# into the library so unit tests and fuzz targets can link the modules.
#
# The folders are the layers (HACKING.md, "Modules"), never upward:
#   gateway/        the server: endpoints to front doors, shared state,
#                   reload, drain; /v1/whoami and /v1/runtimes (gw_info)
#   doors/mcp       MCP: its tools are the jobs and sessions doors' pipelines
#   doors/dify      Dify's sandbox API, through the jobs door's pipeline
#   doors/jobs      RAGFlow /run, native /v1/run and /v1/analyze
#   doors/sessions  /v1/sessions
#   console/        the audit index and the console's reads
#   core/           admission and what it stands on: caller, rate, caps,
#                   policy, analysis, audit, metrics, the router to executors
# Each folder's objects see only the include paths of their layer (LAYER_INC),
# so admission cannot include a door and a door cannot include another door
# except the two uses above. The gateway sees the analyzer core (analyze.h,
# policy.h, verdict_cache.h, ...) and common/, never a language folder or the
# executors.
GW_INC_CORE := -Icommon -Ianalyzers -Igateway/core
GW_INC_ALL := $(GW_INC_CORE) -Igateway/console -Igateway/doors/jobs -Igateway/doors/sessions \
              -Igateway/doors/mcp -Igateway/doors/dify -Igateway
$(BUILD)/obj/gateway/%.o: LAYER_INC = $(GW_INC_ALL)
$(BUILD)/obj/gateway/core/%.o: LAYER_INC = $(GW_INC_CORE)
$(BUILD)/obj/gateway/console/%.o: LAYER_INC = $(GW_INC_CORE) -Igateway/console
$(BUILD)/obj/gateway/doors/jobs/%.o: LAYER_INC = $(GW_INC_CORE) -Igateway/doors/jobs
$(BUILD)/obj/gateway/doors/sessions/%.o: LAYER_INC = $(GW_INC_CORE) -Igateway/doors/sessions
$(BUILD)/obj/gateway/doors/dify/%.o: LAYER_INC = $(GW_INC_CORE) -Igateway/doors/jobs \
                                                 -Igateway/doors/dify
$(BUILD)/obj/gateway/doors/mcp/%.o: LAYER_INC = $(GW_INC_CORE) -Igateway/doors/jobs \
                                                -Igateway/doors/sessions -Igateway/doors/mcp

GW_CORE := gw_util gw_config gw_tenants gw_netauth gw_egress gw_ratelimit gw_request gw_respond \
           gw_admit gw_installed gw_audit gw_audit_detail gw_metrics gw_discover gw_router \
           gw_router_exec gw_router_session gw_answer gw_overview gw_ruleset gw_relay gw_sse gw_sse_out gw_jobtab
GATEWAY_SRCS += $(patsubst %,gateway/core/%.c,$(GW_CORE)) \
                $(patsubst %,gateway/console/%.c,gw_audit_index gw_audit_api gw_audit_summary gw_console) \
                gateway/doors/jobs/gw_jobs.c gateway/doors/sessions/gw_sessions.c \
                $(patsubst %,gateway/doors/mcp/%.c,gw_mcp_rpc gw_mcp_session gw_mcp_content \
                                                   gw_mcp_tools gw_mcp_stools gw_mcp_calls gw_mcp) \
                gateway/doors/dify/gw_dify.c \
                gateway/gw_info.c gateway/gw_server.c

BINS += $(BUILD)/sandgate
$(BUILD)/sandgate: $(call objs,gateway/main.c) $(LIB_GATEWAY) $(LIB_ANALYZERS) $(LIB_COMMON)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(ALL_LDFLAGS) $(LIBS)

# sandgate-audit: rebuild / catch up the audit index from the log.
BINS += $(BUILD)/sandgate-audit
$(BUILD)/sandgate-audit: $(call objs,gateway/audit_main.c) $(LIB_GATEWAY) $(LIB_ANALYZERS) $(LIB_COMMON)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(ALL_LDFLAGS) $(LIBS)
