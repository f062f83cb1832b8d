# gateway: the sandgate daemon. Everything but main.c goes into the library so
# unit tests and fuzz targets can link the modules.
# The gateway sees the analyzer core (analyze.h, policy.h, verdict_cache.h,
# ...) and common/, never a language folder or the executors.
$(BUILD)/obj/gateway/%.o: LAYER_INC = -Icommon -Ianalyzers -Igateway
GATEWAY_SRCS += gateway/gw_util.c gateway/gw_config.c gateway/gw_tenants.c gateway/gw_netauth.c gateway/gw_egress.c gateway/gw_ratelimit.c \
                gateway/gw_request.c gateway/gw_admit.c gateway/gw_audit.c gateway/gw_metrics.c \
                gateway/gw_router.c gateway/gw_router_exec.c gateway/gw_router_session.c gateway/gw_ruleset.c gateway/gw_respond.c \
                gateway/gw_jobs.c gateway/gw_info.c gateway/gw_mcp_rpc.c gateway/gw_mcp_session.c \
                gateway/gw_mcp_content.c gateway/gw_mcp_tools.c gateway/gw_mcp_stools.c gateway/gw_mcp_calls.c gateway/gw_mcp.c gateway/gw_server.c gateway/gw_discover.c \
                gateway/gw_sse.c gateway/gw_relay.c gateway/gw_jobtab.c gateway/gw_sse_out.c \
                gateway/gw_sessions.c gateway/gw_audit_index.c gateway/gw_audit_detail.c gateway/gw_audit_api.c gateway/gw_audit_summary.c gateway/gw_console.c \
                gateway/gw_dify.c

BINS += $(BUILD)/sandgate
$(BUILD)/sandgate: $(call objs,gateway/main.c) $(LIB_GATEWAY) $(LIB_ANALYZERS) $(LIB_COMMON)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(ALL_LDFLAGS) $(LIBS)

# sandgate-audit: rebuild / catch up the audit index from the log.
BINS += $(BUILD)/sandgate-audit
$(BUILD)/sandgate-audit: $(call objs,gateway/audit_main.c) $(LIB_GATEWAY) $(LIB_ANALYZERS) $(LIB_COMMON)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(ALL_LDFLAGS) $(LIBS)
