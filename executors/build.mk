# executors: sandgate-executor, the per-language warm-pool runner of accepted jobs.
# Everything but main.c goes into the library so unit tests and fuzz targets link it.
# The executor sees only common/.
$(BUILD)/obj/executors/%.o: LAYER_INC = -Icommon -Iexecutors
EXECUTOR_SRCS += executors/exec_config.c executors/docker.c executors/attach.c executors/sandbox.c \
                 executors/outcome.c executors/egress.c executors/job.c executors/exec_api.c executors/metrics.c \
                 executors/pool.c executors/seccomp.c executors/exec_server.c \
                 executors/flavour.c executors/pools.c executors/sessions.c \
                 executors/sessions_http.c executors/sessions_store.c executors/sessions_recover.c executors/exec_sse.c \
                 executors/json_out.c
EXECUTOR_SRCS += executors/runtime_info.c executors/exec_jobs.c executors/runsc_info.c \
                 executors/pkgset.c executors/sandbox_runsc.c \
                 executors/sandbox_runsc_spec.c executors/sandbox_runsc_io.c \
                 executors/sandbox_runsc_restore.c
BINS += $(BUILD)/sandgate-executor

$(BUILD)/sandgate-executor: $(BUILD)/obj/executors/main.o $(LIB_EXECUTOR) $(LIB_COMMON)
	@mkdir -p $(dir $@)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(LIBS)
