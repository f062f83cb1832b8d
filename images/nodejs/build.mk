# images/nodejs: sandgate-runner, the Node.js sandbox's main process (the
# protocol-holding parent of the node child; images/nodejs/README.md). Built
# here with the house flags, and again inside the image's build stage.
# The runner sees only common/ (and its own folder).
$(BUILD)/obj/images/nodejs/%.o: LAYER_INC = -Icommon -Iimages/nodejs
NODE_RUNNER_SRCS := images/nodejs/runner_job.c images/nodejs/runner_watch.c images/nodejs/runner_view.c \
                    images/nodejs/runner_session.c \
                    images/nodejs/runner_result.c common/sg_error.c common/buf.c common/b64.c \
                    common/json_nesting.c common/json_raw.c common/sg_file_name.c common/sg_time.c \
                    common/sg_random.c
NODE_RUNNER_OBJS := $(call objs,$(NODE_RUNNER_SRCS))
BINS += $(BUILD)/sandgate-runner

$(BUILD)/sandgate-runner: $(call objs,images/nodejs/runner_main.c) $(NODE_RUNNER_OBJS)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) -ljansson -lm

# Its unit tests link the runner's modules (not part of the daemons' libraries).
$(BUILD)/tests/test_node_runner: tests/unit/test_node_runner.c $(NODE_RUNNER_OBJS) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -Iimages/nodejs $< -o $@ $(ALL_LDFLAGS) $(NODE_RUNNER_OBJS) \
	    $(ALL_LIBS) $(LIBS) $(TEST_LIBS)

# Its fuzz target likewise (`make fuzz` builds every $(FUZZ_BINS)).
$(BUILD)/fuzz/fuzz_node_runner: tests/fuzz/fuzz_node_runner.c $(NODE_RUNNER_OBJS) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iimages/nodejs -fsanitize=fuzzer $< -o $@ $(ALL_LDFLAGS) -fsanitize=fuzzer \
	    $(NODE_RUNNER_OBJS) $(ALL_LIBS) $(LIBS)

# libsandgate_nocode.so: the Node job's no-new-native-code filter, a minimal
# Node-API module like libsandgate_rt.so (runner_nocode.c).
BINS += $(BUILD)/libsandgate_nocode.so
$(BUILD)/libsandgate_nocode.so: images/nodejs/runner_nocode.c
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -D_GNU_SOURCE $(WARN) $(CFLAGS) -fstack-protector-strong -fPIC -shared \
	    -fvisibility=hidden $< -o $@ -Wl,-z,relro,-z,now

$(BUILD)/tests/test_node_nocode: tests/unit/test_node_nocode.c images/nodejs/runner_nocode.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iimages/nodejs $< -o $@ $(ALL_LDFLAGS) $(TEST_LIBS)
