# cudalab: a terminal REPL for learning CUDA.
#   make run    install missing system packages, build, start the REPL
#   make test   build and run every test that needs no GPU (ends with "N passed, M failed, K skipped")
#   make test-gpu, make bench, make install, make clean
# Every path and flag can be overridden from the environment or the command line.

CC        ?= cc
CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
BUILD     ?= build

PKG_CONFIG ?= pkg-config
LUA_CFLAGS ?= $(shell $(PKG_CONFIG) --cflags lua5.4 2>/dev/null || echo -I/usr/include/lua5.4)
LUA_LIBS   ?= $(shell $(PKG_CONFIG) --libs lua5.4 2>/dev/null || echo -llua5.4)
# Readline's headers only: the console loads the library on a terminal (repl/console/readline_lib.c).
READLINE_CFLAGS ?=
CUDA_CFLAGS ?= -I$(CUDA_HOME)/include
# cudart is linked statically; libcuda never: cudart loads the driver at run time, so the
# binary starts (and reports "no GPU") on a machine without one. Nor is NVRTC linked: only the
# process that compiles loads it (repl/compile/nvrtc_lib.c), first from NVRTC_LIBDIR, then by soname.
CUDA_LIBS   ?= -L$(CUDA_HOME)/lib64 -lcudart_static -lrt -ldl
NVRTC_LIBDIR ?= $(CUDA_HOME)/lib64
# For the programs that call NVRTC themselves (the benchmark's C anchor, lessons' measurements).
NVRTC_LIBS  ?= -L$(NVRTC_LIBDIR) -lnvrtc -Wl,-rpath,$(NVRTC_LIBDIR)

# Every build is quiet under these, with gcc and clang; an unused parameter (a callback that
# matches a table's signature) is marked with (void) where it is, not switched off here.
WARN := -Wall -Wextra -Wpedantic -Wformat=2 -Wshadow -Wstrict-prototypes -Wmissing-prototypes
OPT  ?= -O2 -g
ifeq ($(SANITIZER),address)
  SAN := -fsanitize=address -fno-omit-frame-pointer
else ifeq ($(SANITIZER),undefined)
  SAN := -fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
else ifneq ($(SANITIZER),)
  $(error SANITIZER must be address or undefined, not '$(SANITIZER)')
endif
ifneq ($(SANITIZER),)
  BUILD := $(BUILD)-$(SANITIZER)
endif

ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) $(SAN) $(SIM_DEFS) -MMD -MP -Iinclude $(REPL_INCLUDES) -Isim \
             $(CUDA_CFLAGS) $(LUA_CFLAGS) $(READLINE_CFLAGS) -pthread $(CFLAGS)
ALL_LDFLAGS = $(SAN) -pthread $(LDFLAGS)

ifeq ($(V),1)
  Q :=
else
  Q := @
endif

.DEFAULT_GOAL := all  # sim.mk and fuzz.mk below define targets of their own
-include sim/sim.mk

# The simulator is built in when sim/ provides it (sim/sim.mk defines SIM_SRCS).
ifneq ($(SIM_SRCS),)
  SIM_DEFS := -DCUDALAB_HAVE_SIM
  REPL_SRCS := repl/main.c $(wildcard repl/*/*.c)
else
  REPL_SRCS := $(filter-out repl/backend/backend_sim.c repl/backend/sim_module_memo.c,repl/main.c $(wildcard repl/*/*.c))
endif
# repl/ is a folder per layer (ARCHITECTURE.md); a file includes another's header by its name alone.
REPL_INCLUDES := $(addprefix -iquote ,$(wildcard repl/*/))
# Objects go under $(BUILD)/obj, apart from sim.mk's own build of the library in build/sim.
REPL_OBJS := $(REPL_SRCS:%.c=$(BUILD)/obj/%.o)
SIM_OBJS  := $(SIM_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
# Objects the unit tests may link against: everything but main and the console.
LIB_OBJS  := $(filter-out $(BUILD)/obj/repl/main.o,$(REPL_OBJS)) $(SIM_OBJS)
BIN := $(BUILD)/cudalab

.PHONY: check-headers all run deps test test-unit test-gpu bench bench-builtin install clean model-calibrate model-fit model-check corpus-record sfu-check sfu-vectors lesson-data blas-rates
all: $(BIN)

$(BIN): $(REPL_OBJS) $(SIM_OBJS)
	@echo "  LINK  $@"
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LUA_LIBS) $(CUDA_LIBS) -lm

# The toolkit's headers are looked for next to the NVRTC that is loaded; this is the fallback.
$(BUILD)/obj/repl/compile/includes.o: ALL_CFLAGS += -DCUDALAB_CUDA_HOME='"$(CUDA_HOME)"'
$(BUILD)/obj/repl/compile/nvrtc_lib.o: ALL_CFLAGS += -DCUDALAB_NVRTC_LIBDIR='"$(NVRTC_LIBDIR)"'

# Without Lua's and readline's headers a plain `make` would stop at "lauxlib.h: No such file":
# say what to run instead (make deps installs them; make run and make test do it first).
$(REPL_OBJS): | check-headers
check-headers:
	@printf '#include <lauxlib.h>\n#include <stdio.h>\n#include <readline/readline.h>\n' | \
	  $(CC) $(LUA_CFLAGS) $(READLINE_CFLAGS) -E -x c - >/dev/null 2>&1 || { \
	  echo "cudalab: the Lua 5.4 or readline development headers are missing: run 'make deps'"; \
	  echo "         (or make run / make test, which install them first), or set LUA_CFLAGS"; \
	  echo "         and READLINE_CFLAGS to where they are."; exit 1; }

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LUA_LIBS) $(CUDA_LIBS) -lm

# deps runs first and on its own, so that the flags above are read again once the packages
# exist (a fresh machine has no lua5.4.pc when make starts).
deps:
	@sh tools/deps.sh

run: deps
	@$(MAKE) --no-print-directory all
	@$(BIN)

test: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS)
	@BUILD=$(BUILD) SANITIZER=$(SANITIZER) sh tests/run.sh

test-gpu: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS)
	@BUILD=$(BUILD) SANITIZER=$(SANITIZER) sh tests/run.sh --gpu

bench: deps
	@$(MAKE) --no-print-directory all $(BUILD)/bench/launch_c $(BUILD)/bench/empty $(BUILD)/bench/startup
	@BUILD=$(BUILD) sh bench/run.sh

# make bench's rows for the built-in operations alone (on a GPU): bandwidth beside a C copy.
bench-builtin: deps
	@$(MAKE) --no-print-directory all $(BUILD)/bench/launch_c
	@BUILD=$(BUILD) sh bench/builtin_gpu.sh

# The simulator's H200 timing model (bench/model/): measure the calibration on the GPU, fit the
# parameters into sim/h200_params.h (and rebuild), and validate on the GPU into bench/MODEL.md.
# Without a GPU, model-check models the validation set against the H200 times last measured.
model-calibrate: deps
	@$(MAKE) --no-print-directory all
	$(BIN) bench/model/calibrate.lua bench/model/calibration.lua

model-fit: deps
	@$(MAKE) --no-print-directory all
	$(BIN) --sim bench/model/fit.lua bench/model/calibration.lua sim/h200_params.h
	@$(MAKE) --no-print-directory all

# The H200 times model-check reads without a GPU: the effect set's, measured apart, then the
# whole set's (a later file's time for a point wins, so a new whole run supersedes the first).
MODEL_TIMES := bench/model/h200_effects.lua,bench/model/h200_times.lua
model-check: deps
	@$(MAKE) --no-print-directory all
	@if $(BIN) -e 'os.exit(cuda.backend() == "cuda" and 0 or 1)' >/dev/null 2>&1; then \
	  $(BIN) bench/model/check.lua --save-gpu bench/model/h200_times.lua --out bench/MODEL.md; \
	else \
	  echo "no GPU: modelling against the H200 times in $(MODEL_TIMES)"; \
	  $(BIN) bench/model/check.lua --gpu-times $(MODEL_TIMES) --out bench/MODEL.md; \
	fi

# The kernel corpus' digests (tests/corpus/): run every case on the GPU and keep the bits of its
# outputs in tests/corpus/digests.lua, which make test then holds the simulator to.
corpus-record: deps
	@$(MAKE) --no-print-directory all
	@$(BIN) -e 'os.exit(cuda.backend() == "cuda" and 0 or 1)' >/dev/null 2>&1 || \
	  { echo "corpus-record needs a GPU: the digests are the GPU's bits"; exit 1; }
	@rm -f $(BUILD)/corpus.digests
	@for f in tests/corpus/*.lua; do \
	  case $$f in */corpus.lua|*/digests.lua) continue;; esac; \
	  CUDALAB_CORPUS_RECORD=$(BUILD)/corpus.digests $(BIN) --gpu $$f | grep -v '^ok '; \
	done; true
	@{ echo "-- digests.lua: the bits of each corpus case's outputs (tests/corpus/corpus.lua), recorded"; \
	   echo "-- by make corpus-record on $$($(BIN) --gpu -e 'io.write(cuda.device().name)'), $$(date -u +%Y-%m-%d)."; \
	   echo "return {"; sort $(BUILD)/corpus.digests; echo "}"; } \
	  > $(BUILD)/digests.lua && mv $(BUILD)/digests.lua tests/corpus/digests.lua
	@echo "$$(grep -c ' = ' tests/corpus/digests.lua) digests in tests/corpus/digests.lua"

# The simulator's .approx functions against the GPU's special-function unit, on every input
# (bench/sfu/exhaustive.cu): writes bench/SFU.md. SFU_DUMP=dir also keeps there the GPU's results
# on the binades that `python3 bench/sfu/fit_table.py dir > sim/sim_sfu_tables.h` fits the
# unit's tables to.
# The GPU program that compares the simulator's .approx functions with the GPU's (on a GPU).
SFU_PROG := $(BUILD)/sfu/exhaustive
$(SFU_PROG): bench/sfu/exhaustive.cu sim/sim_sfu.c sim/sim_sfu.h sim/sim_sfu_tables.h
	@mkdir -p $(BUILD)/sfu
	$(Q)$(CC) -O2 -std=c11 $(WARN) -Isim -c sim/sim_sfu.c -o $(BUILD)/sfu/sim_sfu.o
	$(Q)$(CUDA_HOME)/bin/nvcc -O2 -arch=native -Isim bench/sfu/exhaustive.cu $(BUILD)/sfu/sim_sfu.o \
	  -o $@ -lpthread

sfu-check: $(SFU_PROG)
	$(if $(SFU_DUMP),@mkdir -p $(SFU_DUMP))
	@{ echo "# The special-function unit: simulator against GPU, every input"; echo; \
	   echo "Written by \`make sfu-check\` on $$(date -u +%Y-%m-%d) (bench/sfu/exhaustive.cu)."; \
	   $(SFU_PROG) $(if $(SFU_DUMP),--dump $(SFU_DUMP)); } > $(BUILD)/SFU.md
	@mv $(BUILD)/SFU.md bench/SFU.md && cat bench/SFU.md

# Inputs of each .approx instruction with the GPU's results, which tests/sim/test_sfu.c checks.
sfu-vectors: $(SFU_PROG)
	$(SFU_PROG) --vectors tests/sim/sfu_vectors.h

# cuBLAS times on the GPU, which the simulator charges for cuda.blas (repl/backend/h200_cublas.h).
blas-rates: deps
	@$(MAKE) --no-print-directory all
	$(BIN) --gpu bench/model/cublas.lua repl/backend/h200_cublas.h
	@$(MAKE) --no-print-directory all

# The GPU figures that lessons quote (lessons/data/measure.c -> lessons/data/h200.lua).
lesson-data:
	@mkdir -p $(BUILD)/lessons
	$(Q)$(CC) -O2 -std=c11 -D_GNU_SOURCE $(WARN) -I$(CUDA_HOME)/include lessons/data/measure.c -o $(BUILD)/lessons/measure \
	  $(CUDA_LIBS) $(NVRTC_LIBS) -lm -lpthread
	@CUDA_CACHE_DISABLE=1 $(BUILD)/lessons/measure > $(BUILD)/lessons/h200.lua
	@mv $(BUILD)/lessons/h200.lua lessons/data/h200.lua && cat lessons/data/h200.lua

# Start-up's anchor and its timer: plain C, linked with nothing but libc.
$(BUILD)/bench/empty $(BUILD)/bench/startup: $(BUILD)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	$(Q)$(CC) -O2 -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -o $@ $< $(LDFLAGS)

$(BUILD)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(NVRTC_LIBS) -lm

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/cudalab
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/cudalab
	cp -R lua kernels lessons $(DESTDIR)$(PREFIX)/share/cudalab/

clean:
	rm -rf build build-address build-undefined

# make fuzz and make valgrind-test.
include tests/fuzz/fuzz.mk

-include $(REPL_OBJS:.o=.d) $(SIM_OBJS:.o=.d)
