# sim/sim.mk: the PTX simulator library and its tests, as a fragment for the top-level Makefile
# (also usable alone: make -f sim/sim.mk sim-test). Defines SIM_SRCS and the sim-test target;
# build outputs go under build/sim/ (build/sim-address/, build/sim-undefined/ with SANITIZER set).
# Paths are relative to the repository root.
#
# SANITIZER=address|undefined builds the library and its tests with that sanitizer, as the
# top-level Makefile does for everything else, so a sanitizer run covers the simulator's own
# tests too; its objects live in a folder of their own so the two builds never mix.
CC ?= cc
CUDA_HOME ?= /usr/local/cuda
SIM_WARN := -std=c11 -Wall -Wextra -Wpedantic -Wformat=2 -Wshadow -Wstrict-prototypes -Wmissing-prototypes
SIM_CFLAGS_BASE := $(SIM_WARN) -O2 -g -D_GNU_SOURCE -pthread

# The stages, bottom up (ARCHITECTURE.md draws them): the lexer and parser (text to module), the
# load-time passes and the loader that runs them, the executor and the timing model.
SIM_SRCS := sim/ptx_lex.c sim/ptx_state.c sim/ptx_loc.c sim/ptx_emit.c sim/ptx_parse.c sim/ptx_inst.c sim/ptx_mbarrier.c \
            sim/ptx_param_addr.c sim/ptx_calls.c \
            sim/sim_cfg.c sim/sim_contract.c sim/sim_mark.c sim/sim_load.c sim/sim_alu.c sim/sim_cvt.c \
            sim/sim_exec.c sim/sim_warpsync.c sim/sim_mem.c sim/sim_param_addr.c sim/sim_printf.c sim/sim_report.c sim/sim_device.c sim/sim_regions.c sim/sim_launch.c \
            sim/sim_sched.c sim/sim_barrier.c sim/sim_mbarrier.c sim/sim_order.c sim/sim_trace.c sim/sim_atomics.c sim/sim_half.c sim/sim_fp8.c sim/ptx_bind.c sim/sim_profile.c sim/sim_cache.c \
            sim/sim_model.c sim/sim_sfu.c sim/sim_calls.c sim/sim_heap.c sim/sim_race.c sim/sim_hb.c \
            sim/sim_demangle.c sim/ptx_tensor.c sim/sim_tensor.c sim/sim_sanitize.c sim/sim_nan.c sim/sim_stale.c sim/sim_lanetags.c sim/sim_undef.c sim/sim_watch.c \
            sim/ptx_dwarf.c sim/sim_debugger.c sim/sim_dbgflow.c sim/sim_dbgcond.c sim/sim_dbgframes.c \
            sim/sim_depend.c \
            sim/sim_managed.c sim/ptx_texture.c sim/sim_texture.c sim/sim_tex.c
# The helpers every stage uses (error buffers, scalar types), below the parser.
SIM_SRCS += sim/sim_base.c
SIM_LIBS := -lm -pthread

ifeq ($(SANITIZER),address)
  SIM_SAN := -fsanitize=address -fno-omit-frame-pointer
else ifeq ($(SANITIZER),undefined)
  SIM_SAN := -fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
else ifneq ($(SANITIZER),)
  $(error SANITIZER must be address or undefined, not '$(SANITIZER)')
endif
SIM_CFLAGS_BASE += $(SIM_SAN)
# The modelled device's description (include/h200.h): the one header sim/ reads from outside it.
SIM_CFLAGS_BASE += -Iinclude

SIM_BUILD := build/sim$(if $(SANITIZER),-$(SANITIZER))
SIM_OBJS := $(patsubst sim/%.c,$(SIM_BUILD)/%.o,$(SIM_SRCS))
SIM_LIB := $(SIM_BUILD)/libcudalab_sim.a

SIM_TEST_SRCS := $(wildcard tests/sim/test_*.c)
SIM_TEST_BINS := $(patsubst tests/sim/%.c,$(SIM_BUILD)/%,$(SIM_TEST_SRCS))
SIM_TEST_HELPER := tests/sim/nvrtc_util.c
SIM_NVRTC := -I$(CUDA_HOME)/include -L$(CUDA_HOME)/lib64 -lnvrtc -Wl,-rpath,$(CUDA_HOME)/lib64

$(SIM_BUILD)/%.o: sim/%.c $(wildcard sim/*.h) sim/ptx_opcodes.def sim/perf_params.def
	@mkdir -p $(SIM_BUILD)
	$(CC) $(SIM_CFLAGS_BASE) $(CFLAGS) -Isim -c $< -o $@

$(SIM_OBJS): include/h200.h include/launch_bounds.h

$(SIM_LIB): $(SIM_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(SIM_BUILD)/test_%: tests/sim/test_%.c $(SIM_TEST_HELPER) tests/sim/nvrtc_util.h $(SIM_LIB)
	$(CC) $(SIM_CFLAGS_BASE) $(CFLAGS) -Isim -Itests/sim $< $(SIM_TEST_HELPER) $(SIM_LIB) $(SIM_NVRTC) $(SIM_LIBS) -o $@

# The GPU's results for chosen inputs of each .approx instruction (make sfu-vectors writes them).
$(SIM_BUILD)/test_sfu: tests/sim/sfu_vectors.h

$(SIM_BUILD)/bench_speed: tests/sim/bench_speed.c $(SIM_TEST_HELPER) tests/sim/nvrtc_util.h $(SIM_LIB)
	$(CC) $(SIM_CFLAGS_BASE) $(CFLAGS) -Isim -Itests/sim $< $(SIM_TEST_HELPER) $(SIM_LIB) $(SIM_NVRTC) $(SIM_LIBS) -o $@

.PHONY: sim-lib sim-test sim-bench sim-clean
sim-lib: $(SIM_LIB)

# Runs every tests/sim program; each prints its plan ("1..N") and "ok - name" / "not ok - name:
# why" lines, which tests/run.sh counts and holds to the plans. A program that dies of a signal
# is a failure even after a "not ok" line.
sim-test: $(SIM_TEST_BINS)
	@pass=0; fail=0; for t in $(SIM_TEST_BINS); do \
	  $$t > $$t.out 2>&1; rc=$$?; cat $$t.out; \
	  p=$$(grep -c '^ok - ' $$t.out); f=$$(grep -c '^not ok - ' $$t.out); \
	  if [ $$rc -gt 128 ] || { [ $$rc -ne 0 ] && [ $$f -eq 0 ]; }; then \
	    f=$$((f + 1)); echo "not ok - $$t exited with status $$rc"; fi; \
	  pass=$$((pass + p)); fail=$$((fail + f)); done; \
	echo "$$pass passed, $$fail failed"; [ $$fail -eq 0 ]

# Best-of-5 thread-instruction rates, 1 and 2 host threads (see tests/sim/bench_speed.c).
sim-bench: $(SIM_BUILD)/bench_speed
	$(SIM_BUILD)/bench_speed

sim-clean:
	rm -rf $(SIM_BUILD)
