# images/runtime: libsandgate_rt.so, the run-time seccomp filter the sandbox
# runners install in the job's process (rt_filter.h). Built with -fPIC, apart
# from the daemons' objects; its unit tests link rt_filter.c directly.
RT_SRCS := images/runtime/rt_filter.c images/runtime/rt_lib.c
BINS += $(BUILD)/libsandgate_rt.so

$(BUILD)/libsandgate_rt.so: $(RT_SRCS) images/runtime/rt_filter.h
	@mkdir -p $(dir $@)
	$(CC) -std=c17 -D_GNU_SOURCE $(WARN) $(CFLAGS) -fstack-protector-strong -fPIC -shared \
	    -fvisibility=hidden -Iimages/runtime $(RT_SRCS) -o $@ -Wl,-z,relro,-z,now

$(BUILD)/tests/test_rt_filter: tests/unit/test_rt_filter.c images/runtime/rt_filter.c \
                               images/runtime/rt_filter.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iimages/runtime tests/unit/test_rt_filter.c images/runtime/rt_filter.c \
	    -o $@ $(ALL_LDFLAGS) -lpthread $(TEST_LIBS)
