"""Ember's thread pool, written as LLVM IR: parallel loops call it from generated code.

`loop-parallelize` turns the outermost parallel loop of a kernel into an
outlined body and a launch; the LLVM lowering makes the launch a call

    void ember_parallel_for(void (*task)(void *ctx, int64_t begin, int64_t end),
                            void *ctx, int64_t n, int64_t threads);

which splits [0, n) into chunks, runs them on the calling thread and on up
to `threads - 1` workers, and returns when every chunk has run. The pool is
generated as IR (not C) because a user's machine may have no C compiler at
run time; it needs only POSIX threads from libc. The JIT builds it once per
process (`jit.py`) and every compiled model calls that one; `ember compile`
links a private copy into each shared library (`aot.py`).

How it works:

- Workers are created lazily by the first launch that needs them (more by a
  later launch asking for more threads) and never exit. A worker that fails
  to start is simply not used.
- A launch publishes the job (task, ctx, n, chunk count, how many workers
  take part) under the pool's mutex and bumps a generation counter. Workers
  spin briefly on that counter after each job, then block on a condition
  variable, so an idle pool burns no cores. A spinning worker reads the job
  without the mutex (taking it while the caller still held it cost a futex
  sleep and wake-up: on two threads, a launch of 8 us of work took 5.6 us
  instead of 5.1). A worker joins the job through an atomic state word (the
  job's generation, a closed bit, a count of workers inside), which also
  proves that what it read was that job; once every chunk is claimed the
  caller closes the job, so a worker still waking up stays out, and waits
  (spin, then a second condition variable, which the last worker out
  signals only if the caller says it blocks) only for the workers inside.
  On a busy machine a launch therefore never waits for a worker the OS has
  not scheduled.
- Chunks (about `CHUNKS_PER_THREAD` per thread) are split into one share
  of consecutive chunks per thread taking part (the caller's first), each
  claimed through an atomic counter of its own. A thread runs its own share,
  then helps with the others', so a thread that the OS delays leaves its
  share to the others, while on time every thread runs the same share of
  every launch: consecutive kernels splitting the same data alike (rows of
  an activation) find their part in the same core's cache. (With one shared
  counter, ResNet-50 on two threads was 4 to 10% slower.)
  Which thread runs a chunk never changes what it computes: each element's
  arithmetic stays in the body, in its order.
- One launch runs at a time: a launch that finds the pool busy (a parallel
  loop inside a body, or a second application thread) runs its whole range
  on its own thread, so nesting cannot deadlock.
- On Linux each worker binds itself to one CPU: the next ones the process
  may run on after the CPU where the first launch ran (the caller's
  thread stays free). Unbound, a worker woken after a pause was often put
  on the caller's own CPU (a virtual machine reports an idle vCPU as
  unavailable), where the two shared one core until Linux moved one:
  ShuffleNet on two threads, run every 20 ms, took 7.9 ms instead of
  2.4 ms. A worker is left unbound when the CPUs the process may run on
  run out (the caller's, then one per worker), or when
  `EMBER_BIND_THREADS=0` (read at the first launch).
- `ember_set_threads(k)` overrides the compiled thread count for all later
  launches (k >= 1; 1 runs everything on the calling thread); 0 or less
  restores the compiled count.

Tracing (`ember bench --trace`, `targets/cpu/trace.py`): while
`ember_trace_set(buffer, capacity)` has given it a buffer, each chunk a
thread runs appends one event (-1, participant, begin, end: cycle-counter
readings; the caller is participant 0, worker w is w + 1) and
`ember_trace_record(kernel, begin, end)`, called by code that
`loop-instrument-kernels` traces, appends (kernel, 0, begin, end); an atomic
counter gives each event its slot, events past the capacity are counted,
not stored. Without a buffer a chunk costs one load more and reads no counter.
A launch that runs its whole range alone (one thread wanted, the pool
busy) appends nothing: its kernel call's event covers it.
The JIT's pool exports both; a library's (`aot.py`) keeps them internal.

Mutexes and condition variables are opaque, platform-sized types, so they get
generous zeroed storage (`SYNC_BYTES`, aligned) and `pthread_*_init`; a
thread id gets the same.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir
from llvmlite.ir import instructions as ir_instructions

from ember.lowering.loop_to_llvm.parallel import PARALLEL_FOR
from ember.lowering.loop_to_llvm.timing import TRACE_RECORD
from ember.options import MAX_THREADS

SET_THREADS = "ember_set_threads"
"""`void ember_set_threads(int64_t threads)`: the run-time override."""
TRACE_SET = "ember_trace_set"
"""`void ember_trace_set(int64_t *buffer, int64_t capacity)`: trace into `buffer`
(`capacity` events of `TRACE_FIELDS` int64s) from now on; a null buffer stops."""
TRACE_COUNT = "ember_trace_count"
"""`int64_t ember_trace_count(void)`: events appended since the last `ember_trace_set`."""
TRACE_FIELDS = 4
"""kernel (-1: a chunk of a parallel loop), participant, begin, end."""
CHUNK_EVENT = -1

CHUNKS_PER_THREAD = 4
"""Chunks per thread taking part: enough to rebalance when one is delayed,
few enough that claiming them costs nothing next to running them."""
SPIN_ITERATIONS = 50000
"""How often a waiting thread polls (with the CPU's spin-wait hint) before it
blocks, about a millisecond on current x86 cores: the back-to-back launches
of one inference find the workers awake (measured on SqueezeNet: 1.69x on
two threads with ten times this, 1.56x with a tenth), an idle pool soon
sleeps and leaves the cores to other work."""
BIND_ENV = "EMBER_BIND_THREADS"
"""`EMBER_BIND_THREADS=0` leaves the workers unbound (any other value, or none, binds them)."""
CPU_SET_BYTES = 128
"""A Linux `cpu_set_t`: one bit per CPU, 1024 CPUs."""
SYNC_BYTES = 128
"""Storage for one pthread_mutex_t, pthread_cond_t or pthread_t (40, 48 and
8 bytes on glibc; 64, 48 and 8 on macOS)."""

_I8, _I32, _I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
_PTR = ir.PointerType()
_VOID = ir.VoidType()
_TASK = ir.FunctionType(_VOID, [_PTR, _I64, _I64])
_ORDER = "seq_cst"

_PAUSE = {"x86_64": ("llvm.x86.sse2.pause", ()), "aarch64": ("llvm.aarch64.hint", (1,))}
"""The spin-wait hint per architecture (x86 `pause`, Arm `yield`); none elsewhere."""


def _call_task(b: ir.IRBuilder, task: ir.Value, *args: ir.Value) -> None:
    """`task(args)` through a function pointer. llvmlite's `call` needs the
    callee's function type, which an opaque `ptr` lacks: a cast to a typed
    pointer gives it one (printed as a no-op cast, which LLVM folds)."""
    typed = ir_instructions.CastInstr(b.block, "bitcast", task, ir.PointerType(_TASK))
    b._insert(typed)  # noqa: SLF001 - IRBuilder.bitcast returns the opaque pointer unchanged
    b.call(typed, list(args))


_COUNTER_STRIDE = ir.Constant(_I64, 8)
"""i64s from one participant's claim counter to the next's: a 64-byte cache line."""

_CLOSED = 1 << 31
_OPEN_MASK = ir.Constant(ir.IntType(64), -_CLOSED)
"""The bits of the state word that say which job it is and whether it is closed."""


def _tag(b: ir.IRBuilder, generation: ir.Value) -> ir.Value:
    """The state word of an open, empty job: the generation's low 32 bits
    above bit 32 (bit 31: closed; bits 0-30: workers inside). A worker would
    have to sleep through 2**32 launches to mistake one job for another."""
    return b.shl(b.and_(generation, ir.Constant(_I64, 0xFFFF_FFFF)), ir.Constant(_I64, 32))


class _Pool:
    """The globals of one pool and the functions that use them, in `module`."""

    def __init__(self, module: ir.Module, set_threads_name: str, export_trace: bool) -> None:
        self.module = module
        self.set_threads_name = set_threads_name
        self.export_trace = export_trace
        # The trace (see the module docstring): buffer as an integer, its
        # capacity in events, and the next event's slot.
        self.trace_buffer = self._global("ember_trace_buffer", _I64)
        self.trace_capacity = self._global("ember_trace_capacity", _I64)
        self.trace_next = self._global("ember_trace_next", _I64)
        self.cycle_counter = self._declare("llvm.readcyclecounter", _I64, [])
        self.mutex = self._global("ember_pool_mutex", ir.ArrayType(_I8, SYNC_BYTES), 64)
        self.work = self._global("ember_pool_work", ir.ArrayType(_I8, SYNC_BYTES), 64)
        self.done = self._global("ember_pool_done", ir.ArrayType(_I8, SYNC_BYTES), 64)
        self.initialized = self._global("ember_pool_initialized", _I64)
        self.busy = self._global("ember_pool_busy", _I64)
        # Set by a caller about to block until the job's workers are out.
        self.caller_blocks = self._global("ember_pool_caller_blocks", _I64)
        self.override = self._global("ember_pool_threads", _I64)
        self.started = self._global("ember_pool_workers", _I64)
        self.start_generation = self._global("ember_pool_start_generation",
                                             ir.ArrayType(_I64, MAX_THREADS), 8)  # fmt: skip
        # The job: written under the mutex before `generation` moves on.
        self.generation = self._global("ember_pool_generation", _I64)
        # Pointers are kept as integers: llvmlite cannot store atomically
        # through an opaque pointer to a pointer.
        self.task = self._global("ember_pool_task", _I64)
        self.ctx = self._global("ember_pool_ctx", _I64)
        self.n = self._global("ember_pool_n", _I64)
        self.chunks = self._global("ember_pool_chunks", _I64)
        self.helpers = self._global("ember_pool_helpers", _I64)
        # One claim counter per participant, each on a cache line of its own.
        self.next_chunk = self._global("ember_pool_next_chunk",
                                       ir.ArrayType(_I64, MAX_THREADS * _COUNTER_STRIDE.constant), 64)  # fmt: skip
        # The job's state word (`_tag`): its generation, whether it is
        # closed to workers, how many workers are in it.
        self.state = self._global("ember_pool_state", _I64)
        self.libc = {
            name: self._declare(name, ret, args)
            for name, ret, args in (
                ("pthread_mutex_init", _I32, [_PTR, _PTR]),
                ("pthread_cond_init", _I32, [_PTR, _PTR]),
                ("pthread_mutex_lock", _I32, [_PTR]),
                ("pthread_mutex_unlock", _I32, [_PTR]),
                ("pthread_cond_wait", _I32, [_PTR, _PTR]),
                ("pthread_cond_broadcast", _I32, [_PTR]),
                ("pthread_cond_signal", _I32, [_PTR]),
                ("pthread_create", _I32, [_PTR, _PTR, _PTR, _PTR]),
            )
        }
        # Binding workers to CPUs (Linux only; see the module's docstring).
        self.binds = "linux" in module.triple
        if self.binds:
            for name, ret, args in (("sched_getaffinity", _I32, [_I32, _I64, _PTR]),
                                    ("sched_setaffinity", _I32, [_I32, _I64, _PTR]),
                                    ("sched_getcpu", _I32, []), ("getenv", _PTR, [_PTR])):  # fmt: skip
                self.libc[name] = self._declare(name, ret, args)
            # 0: bind no worker; 1: bind them (set with the mutex, at the first launch).
            self.bind = self._global("ember_pool_bind", _I64)
            # The CPU of the first launch; worker w gets the (w+1)-th allowed CPU after it.
            self.home = self._global("ember_pool_home", _I64)
            # Per worker: its CPU + 1, or 0 for none (written before it starts).
            self.worker_cpus = self._global(
                "ember_pool_worker_cpus", ir.ArrayType(_I64, MAX_THREADS), 8
            )
            text = bytearray(BIND_ENV.encode() + b"\0")
            self.bind_env = self._global("ember_pool_bind_env", ir.ArrayType(_I8, len(text)), 1)
            self.bind_env.initializer = ir.Constant(self.bind_env.value_type, text)
            self.bind_env.global_constant = True
        pause = _PAUSE.get(module.triple.split("-")[0])
        self.pause: tuple[ir.Function, tuple[int, ...]] | None = None
        if pause is not None:
            name, args = pause
            self.pause = (self._declare(name, _VOID, [_I32] * len(args)), args)

    def _global(self, name: str, t: ir.Type, align: int = 8) -> ir.GlobalVariable:
        variable = ir.GlobalVariable(self.module, t, name)
        variable.initializer = ir.Constant(t, None)  # zero
        variable.linkage = "internal"
        variable.align = align
        return variable

    def _declare(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        return ir.Function(self.module, ir.FunctionType(ret, args), name)

    def _function(self, name: str, t: ir.FunctionType, linkage: str = "internal") -> ir.Function:
        function = ir.Function(self.module, t, name)
        function.linkage = linkage
        function.attributes.add("nounwind")
        return function

    # Small helpers over an IRBuilder.

    @staticmethod
    def load(b: ir.IRBuilder, variable: ir.GlobalVariable) -> ir.Value:
        return b.load_atomic(variable, _ORDER, 8, typ=variable.value_type)

    @staticmethod
    def store(b: ir.IRBuilder, value: ir.Value, variable: ir.Value) -> None:
        b.store_atomic(value, variable, _ORDER, 8)

    def call(self, b: ir.IRBuilder, name: str, *args: ir.Value) -> ir.Value:
        return b.call(self.libc[name], list(args))

    def spin_pause(self, b: ir.IRBuilder) -> None:
        if self.pause is not None:
            function, args = self.pause
            b.call(function, [ir.Constant(_I32, a) for a in args])

    def spin_until(self, b: ir.IRBuilder, fn: ir.Function, ready: Callable[[], ir.Value]) -> None:
        """Polls `ready()` up to SPIN_ITERATIONS times; continues either way."""
        entry = b.block
        check, again, out = (fn.append_basic_block(n) for n in ("spin", "spin.again", "spin.out"))
        b.branch(check)
        b.position_at_end(check)
        count = b.phi(_I64)
        count.add_incoming(ir.Constant(_I64, 0), entry)
        b.cbranch(ready(), out, again)
        b.position_at_end(again)
        self.spin_pause(b)
        step = b.add(count, ir.Constant(_I64, 1))
        count.add_incoming(step, again)
        b.cbranch(b.icmp_unsigned("<", step, ir.Constant(_I64, SPIN_ITERATIONS)), check, out)
        b.position_at_end(out)

    def wait_while(self, b: ir.IRBuilder, fn: ir.Function, cond: ir.Value,
                   blocked: Callable[[], ir.Value]) -> None:  # fmt: skip
        """With the mutex held: `while (blocked()) pthread_cond_wait(cond, mutex)`."""
        check, wait, out = (fn.append_basic_block(n) for n in ("wait", "wait.block", "wait.out"))
        b.branch(check)
        b.position_at_end(check)
        b.cbranch(blocked(), wait, out)
        b.position_at_end(wait)
        self.call(b, "pthread_cond_wait", cond, self.mutex)
        b.branch(check)
        b.position_at_end(out)

    # The functions.

    def build(self) -> None:
        self.trace_event = self.trace_functions()
        run_chunks = self.run_chunks()
        worker = self.worker(run_chunks)
        self.parallel_for(run_chunks, worker, self.worker_cpu() if self.binds else None)
        self.set_threads()

    def worker_cpu(self) -> ir.Function:
        """`worker_cpu(w)`: the CPU worker w is to bind to, plus one, or 0 to
        leave it unbound (binding off, the affinity unreadable, or fewer CPUs
        allowed than w + 2: the caller's and one per worker up to w). It is
        the (w+1)-th allowed CPU after the first launch's, in a cycle."""
        fn = self._function("ember_pool_worker_cpu", ir.FunctionType(_I64, [_I64]))
        (worker,) = fn.args
        entry, read, search, found, unbound = (fn.append_basic_block(n) for n in
                                               ("entry", "read", "search", "found", "unbound"))  # fmt: skip
        zero, one = ir.Constant(_I64, 0), ir.Constant(_I64, 1)
        b = ir.IRBuilder(entry)
        mask = self.cpu_set(b)
        b.cbranch(b.icmp_unsigned("!=", b.load(self.bind), zero), read, unbound)
        b.position_at_end(read)
        status = self.call(b, "sched_getaffinity", ir.Constant(_I32, 0),
                           ir.Constant(_I64, CPU_SET_BYTES), mask)  # fmt: skip
        ctpop = self.module.declare_intrinsic("llvm.ctpop", [_I64])
        allowed: ir.Value = zero
        for word in range(CPU_SET_BYTES // 8):
            bits = b.load(b.gep(mask, [ir.Constant(_I32, 0), ir.Constant(_I32, word)]))
            allowed = b.add(allowed, b.call(ctpop, [bits]))
        steps = b.add(worker, one)
        home = b.load(self.home)
        enough = b.and_(b.icmp_signed("==", status, ir.Constant(_I32, 0)),
                        b.icmp_unsigned("<", steps, allowed))  # fmt: skip
        b.cbranch(enough, search, unbound)
        # Walk the CPUs after home until `steps` allowed ones are passed:
        # at least steps + 1 are allowed, so the walk ends within one cycle.
        b.position_at_end(search)
        cpu, left = b.phi(_I64), b.phi(_I64)
        cpu.add_incoming(home, read)
        left.add_incoming(steps, read)
        following = b.and_(b.add(cpu, one), ir.Constant(_I64, CPU_SET_BYTES * 8 - 1))
        word = b.load(b.gep(mask, [ir.Constant(_I32, 0), b.lshr(following, ir.Constant(_I64, 6))]))
        bit = b.and_(b.lshr(word, b.and_(following, ir.Constant(_I64, 63))), one)
        still = b.sub(left, bit)
        cpu.add_incoming(following, search)
        left.add_incoming(still, search)
        b.cbranch(b.icmp_unsigned("==", still, zero), found, search)
        b.position_at_end(found)
        b.ret(b.add(following, one))
        b.position_at_end(unbound)
        b.ret(zero)
        return fn

    @staticmethod
    def cpu_set(b: ir.IRBuilder) -> ir.Value:
        """An empty `cpu_set_t` on the stack."""
        mask = b.alloca(ir.ArrayType(_I64, CPU_SET_BYTES // 8))
        mask.align = 8
        b.store(ir.Constant(mask.allocated_type, None), mask)
        return mask

    def bind_worker(self, b: ir.IRBuilder, fn: ir.Function, index: ir.Value) -> None:
        """The worker's first act: binding itself to its CPU, if it has one."""
        cpu = b.load(b.gep(self.worker_cpus, [ir.Constant(_I32, 0), index]))
        mask = self.cpu_set(b)
        bind, bound = fn.append_basic_block("bind"), fn.append_basic_block("bound")
        b.cbranch(b.icmp_unsigned("!=", cpu, ir.Constant(_I64, 0)), bind, bound)
        b.position_at_end(bind)
        cpu = b.sub(cpu, ir.Constant(_I64, 1))
        slot = b.gep(mask, [ir.Constant(_I32, 0), b.lshr(cpu, ir.Constant(_I64, 6))])
        b.store(b.shl(ir.Constant(_I64, 1), b.and_(cpu, ir.Constant(_I64, 63))), slot)
        self.call(
            b, "sched_setaffinity", ir.Constant(_I32, 0), ir.Constant(_I64, CPU_SET_BYTES), mask
        )
        b.branch(bound)
        b.position_at_end(bound)

    def read_binding(self, b: ir.IRBuilder, fn: ir.Function) -> None:
        """At the first launch: whether to bind (`EMBER_BIND_THREADS`), and
        the CPU the workers are counted from (this one)."""
        env = self.call(b, "getenv", self.bind_env)
        unset, given, done = (
            fn.append_basic_block(n) for n in ("env.unset", "env.given", "env.read")
        )
        b.cbranch(b.icmp_unsigned("==", b.ptrtoint(env, _I64), ir.Constant(_I64, 0)), unset, given)
        b.position_at_end(given)
        off = b.icmp_unsigned("==", b.load(env, typ=_I8), ir.Constant(_I8, ord("0")))
        b.branch(done)
        b.position_at_end(unset)
        b.branch(done)
        b.position_at_end(done)
        disabled = b.phi(ir.IntType(1))
        disabled.add_incoming(off, given)
        disabled.add_incoming(ir.Constant(ir.IntType(1), 0), unset)
        b.store(b.zext(b.not_(disabled), _I64), self.bind)
        b.store(b.sext(self.call(b, "sched_getcpu"), _I64), self.home)

    def trace_functions(self) -> ir.Function:
        """`ember_trace_set`, `ember_trace_count`, `ember_trace_record` and the
        internal `event(kernel, participant, begin, end)` they share, which it returns."""
        linkage = "external" if self.export_trace else "internal"
        zero = ir.Constant(_I64, 0)
        event = self._function("ember_trace_event", ir.FunctionType(_VOID, [_I64] * 4))
        b = ir.IRBuilder(event.append_basic_block("entry"))
        claim, write, out = (event.append_basic_block(n) for n in ("claim", "write", "out"))
        buffer = self.load(b, self.trace_buffer)
        b.cbranch(b.icmp_unsigned("!=", buffer, zero), claim, out)
        b.position_at_end(claim)
        slot = b.atomic_rmw("add", self.trace_next, ir.Constant(_I64, 1), _ORDER)
        b.cbranch(b.icmp_unsigned("<", slot, self.load(b, self.trace_capacity)), write, out)
        b.position_at_end(write)
        base = b.mul(slot, ir.Constant(_I64, TRACE_FIELDS))
        words = b.inttoptr(buffer, _PTR)
        for field, value in enumerate(event.args):
            b.store(value, b.gep(words, [b.add(base, ir.Constant(_I64, field))], source_etype=_I64))
        b.branch(out)
        b.position_at_end(out)
        b.ret_void()

        setter = self._function(TRACE_SET, ir.FunctionType(_VOID, [_PTR, _I64]), linkage)
        b = ir.IRBuilder(setter.append_basic_block("entry"))
        self.store(b, zero, self.trace_buffer)  # no event lands while the rest changes
        self.store(b, zero, self.trace_next)
        self.store(b, setter.args[1], self.trace_capacity)
        self.store(b, b.ptrtoint(setter.args[0], _I64), self.trace_buffer)
        b.ret_void()

        count = self._function(TRACE_COUNT, ir.FunctionType(_I64, []), linkage)
        b = ir.IRBuilder(count.append_basic_block("entry"))
        b.ret(self.load(b, self.trace_next))

        record = self._function(TRACE_RECORD, ir.FunctionType(_VOID, [_I64] * 3), linkage)
        b = ir.IRBuilder(record.append_basic_block("entry"))
        kernel, begin, end = record.args
        b.call(event, [kernel, zero, begin, end])
        b.ret_void()
        return event

    def run_chunks(self) -> ir.Function:
        """`run_chunks(task, ctx, n, chunks, participant, participants)`:
        runs the participant's own chunks, then helps the others with theirs,
        until none is left."""
        fn = self._function("ember_pool_run_chunks",
                            ir.FunctionType(_VOID, [_PTR, _PTR, _I64, _I64, _I64, _I64]))  # fmt: skip
        task, ctx, n, chunks, participant, participants = fn.args
        zero, one = ir.Constant(_I64, 0), ir.Constant(_I64, 1)
        entry = fn.append_basic_block("entry")
        owner, claim, run, out = (fn.append_basic_block(n)
                                  for n in ("owner", "claim", "run", "out"))  # fmt: skip
        b = ir.IRBuilder(entry)
        b.branch(owner)
        # Owners in turn: this participant's own share first, then the next's.
        b.position_at_end(owner)
        turn = b.phi(_I64)
        turn.add_incoming(zero, entry)
        b.cbranch(b.icmp_unsigned("<", turn, participants), claim, out)
        b.position_at_end(claim)
        whose = b.urem(b.add(participant, turn), participants)
        # Participant q owns chunks [q*chunks/P, (q+1)*chunks/P), claimed
        # through its own counter.
        first = b.udiv(b.mul(whose, chunks), participants)
        last = b.udiv(b.mul(b.add(whose, one), chunks), participants)
        counter = b.gep(self.next_chunk, [ir.Constant(_I32, 0), b.mul(whose, _COUNTER_STRIDE)])
        chunk = b.add(first, b.atomic_rmw("add", counter, one, _ORDER))
        next_turn = b.add(turn, one)
        turn.add_incoming(next_turn, claim)
        b.cbranch(b.icmp_unsigned("<", chunk, last), run, owner)
        b.position_at_end(run)
        # Chunk c is [c*n/chunks, (c+1)*n/chunks): sizes differ by one at most.
        begin = b.udiv(b.mul(chunk, n), chunks)
        end = b.udiv(b.mul(b.add(chunk, one), n), chunks)
        plain, traced = fn.append_basic_block("plain"), fn.append_basic_block("traced")
        b.cbranch(b.icmp_unsigned("!=", self.load(b, self.trace_buffer), zero), traced, plain)
        b.position_at_end(plain)
        _call_task(b, task, ctx, begin, end)
        b.branch(claim)
        b.position_at_end(traced)
        started = b.call(self.cycle_counter, [])
        _call_task(b, task, ctx, begin, end)
        ended = b.call(self.cycle_counter, [])
        b.call(self.trace_event, [ir.Constant(_I64, CHUNK_EVENT), participant, started, ended])
        b.branch(claim)
        b.position_at_end(out)
        b.ret_void()
        return fn

    def worker(self, run_chunks: ir.Function) -> ir.Function:
        """A worker's start routine; its argument is its index w. It may
        join a job if w < the job's helper count and the job is still open."""
        fn = self._function("ember_pool_worker", ir.FunctionType(_PTR, [_PTR]))
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        index = b.ptrtoint(fn.args[0], _I64)
        slot = b.gep(self.start_generation, [ir.Constant(_I32, 0), index])
        seen_slot = b.alloca(_I64)
        b.store(b.load(slot), seen_slot)
        if self.binds:
            self.bind_worker(b, fn, index)
        loop = fn.append_basic_block("loop")
        b.branch(loop)
        b.position_at_end(loop)
        seen = b.load(seen_slot)
        self.spin_until(b, fn, lambda: b.icmp_unsigned("!=", self.load(b, self.generation), seen))
        # A job seen while spinning is read without the mutex: the caller
        # still holds it while it wakes sleepers, and a worker blocking on
        # it there would join microseconds late.
        sleep, read = fn.append_basic_block("sleep"), fn.append_basic_block("read")
        b.cbranch(b.icmp_unsigned("!=", self.load(b, self.generation), seen), read, sleep)
        b.position_at_end(sleep)
        self.call(b, "pthread_mutex_lock", self.mutex)
        self.wait_while(b, fn, self.work,
                        lambda: b.icmp_unsigned("==", self.load(b, self.generation), seen))  # fmt: skip
        self.call(b, "pthread_mutex_unlock", self.mutex)
        b.branch(read)
        # The job's fields are written before its generation is published
        # and rewritten only once it is closed; joining (below) succeeds
        # only while it is open, so a worker that joins read them whole.
        b.position_at_end(read)
        generation = self.load(b, self.generation)
        b.store(generation, seen_slot)
        job = [self.load(b, v) for v in (self.task, self.ctx, self.n, self.chunks, self.helpers)]
        task, ctx, n, chunks, helpers = job
        task, ctx = b.inttoptr(task, _PTR), b.inttoptr(ctx, _PTR)
        tag = _tag(b, generation)
        join, joined, finish = (fn.append_basic_block(n) for n in ("join", "joined", "finish"))
        b.cbranch(b.icmp_unsigned("<", index, helpers), join, loop)
        b.position_at_end(join)
        # Join only the job read above, and only while it is open: a worker
        # that wakes late must not run a finished job's task on the next
        # job's chunks (the first's ctx may be gone).
        state = self.load(b, self.state)
        retry = fn.append_basic_block("join.cas")
        b.cbranch(b.icmp_unsigned("==", b.and_(state, _OPEN_MASK), tag), retry, loop)
        b.position_at_end(retry)
        swapped = b.cmpxchg(self.state, state, b.add(state, ir.Constant(_I64, 1)), _ORDER, _ORDER)
        b.cbranch(b.extract_value(swapped, 1), joined, join)
        b.position_at_end(joined)
        one = ir.Constant(_I64, 1)
        b.call(run_chunks, [task, ctx, n, chunks, b.add(index, one), b.add(helpers, one)])
        left = b.atomic_rmw("sub", self.state, ir.Constant(_I64, 1), _ORDER)
        last = b.or_(tag, ir.Constant(_I64, _CLOSED | 1))
        wake = fn.append_basic_block("wake")
        b.cbranch(b.icmp_unsigned("==", left, last), finish, loop)
        b.position_at_end(finish)
        # The last worker out of a closed job wakes the caller if it blocks
        # (a caller still spinning sees the state word). Both sides write
        # (state, flag) before they read the other: one sees the other's.
        # The signal is sent under the mutex, so a caller that saw workers
        # still in is already waiting.
        b.cbranch(b.icmp_unsigned("!=", self.load(b, self.caller_blocks), ir.Constant(_I64, 0)),
                  wake, loop)  # fmt: skip
        b.position_at_end(wake)
        self.call(b, "pthread_mutex_lock", self.mutex)
        self.call(b, "pthread_cond_signal", self.done)
        self.call(b, "pthread_mutex_unlock", self.mutex)
        b.branch(loop)
        return fn

    def parallel_for(self, run_chunks: ir.Function, worker: ir.Function,
                     worker_cpu: ir.Function | None) -> None:  # fmt: skip
        fn = self._function(PARALLEL_FOR, ir.FunctionType(_VOID, [_PTR, _PTR, _I64, _I64]),
                            linkage="external")  # fmt: skip
        task, ctx, n, threads = fn.args
        for arg, name in zip(fn.args, ("task", "ctx", "n", "threads")):
            arg.name = name
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        serial = fn.append_basic_block("serial")
        zero, one = ir.Constant(_I64, 0), ir.Constant(_I64, 1)
        thread_id = b.alloca(ir.ArrayType(_I8, SYNC_BYTES))  # written by pthread_create, unused
        thread_id.align = 16

        override = self.load(b, self.override)
        wanted = b.select(b.icmp_signed(">", override, zero), override, threads)
        wanted = b.select(b.icmp_signed(">", wanted, ir.Constant(_I64, MAX_THREADS)),
                          ir.Constant(_I64, MAX_THREADS), wanted)  # fmt: skip
        claim = fn.append_basic_block("claim")
        worth = b.and_(b.icmp_signed(">", wanted, one), b.icmp_signed(">", n, one))
        b.cbranch(worth, claim, serial)

        b.position_at_end(claim)
        claimed = b.extract_value(b.cmpxchg(self.busy, zero, one, _ORDER, _ORDER), 1)
        grow = fn.append_basic_block("grow")
        b.cbranch(claimed, grow, serial)

        # Start workers until there are wanted - 1 (the first launch also
        # initialises the mutex and condition variables).
        b.position_at_end(grow)
        init, grow_loop = fn.append_basic_block("init"), fn.append_basic_block("grow.loop")
        b.cbranch(b.icmp_unsigned("==", b.load(self.initialized), zero), init, grow_loop)
        b.position_at_end(init)
        null = ir.Constant(_PTR, None)
        self.call(b, "pthread_mutex_init", self.mutex, null)
        self.call(b, "pthread_cond_init", self.work, null)
        self.call(b, "pthread_cond_init", self.done, null)
        if self.binds:
            self.read_binding(b, fn)
        b.store(one, self.initialized)
        b.branch(grow_loop)

        b.position_at_end(grow_loop)
        helpers_wanted = b.sub(wanted, one)
        spawn, launch = fn.append_basic_block("spawn"), fn.append_basic_block("launch")
        started = self.load(b, self.started)
        b.cbranch(b.icmp_unsigned("<", started, helpers_wanted), spawn, launch)
        b.position_at_end(spawn)
        # The new worker has seen every job so far: it starts with the next.
        slot = b.gep(self.start_generation, [ir.Constant(_I32, 0), started])
        b.store(self.load(b, self.generation), slot)
        if worker_cpu is not None:
            cpu_slot = b.gep(self.worker_cpus, [ir.Constant(_I32, 0), started])
            b.store(b.call(worker_cpu, [started]), cpu_slot)
        status = self.call(b, "pthread_create", thread_id, null, worker, b.inttoptr(started, _PTR))
        spawned = fn.append_basic_block("spawned")
        b.cbranch(b.icmp_signed("==", status, ir.Constant(_I32, 0)), spawned, launch)
        b.position_at_end(spawned)
        self.store(b, b.add(started, one), self.started)
        b.branch(grow_loop)

        b.position_at_end(launch)
        started = self.load(b, self.started)
        helpers = b.select(b.icmp_unsigned("<", started, helpers_wanted), started, helpers_wanted)
        publish, release = fn.append_basic_block("publish"), fn.append_basic_block("release")
        b.cbranch(b.icmp_unsigned("==", helpers, zero), release, publish)

        b.position_at_end(publish)
        participants = b.add(helpers, one)
        most = b.mul(participants, ir.Constant(_I64, CHUNKS_PER_THREAD))
        chunks = b.select(b.icmp_signed("<", n, most), n, most)
        self.call(b, "pthread_mutex_lock", self.mutex)
        for value, variable in ((b.ptrtoint(task, _I64), self.task),
                                (b.ptrtoint(ctx, _I64), self.ctx), (n, self.n), (chunks, self.chunks),
                                (helpers, self.helpers)):  # fmt: skip
            self.store(b, value, variable)
        self.reset_counters(b, fn, participants)
        generation = b.add(self.load(b, self.generation), one)
        self.store(b, _tag(b, generation), self.state)
        self.store(b, generation, self.generation)
        self.call(b, "pthread_cond_broadcast", self.work)
        self.call(b, "pthread_mutex_unlock", self.mutex)
        b.call(run_chunks, [task, ctx, n, chunks, zero, participants])
        # Every chunk is claimed: close the job, so workers that have not
        # woken yet stay out, and wait only for those inside.
        b.atomic_rmw("or", self.state, ir.Constant(_I64, _CLOSED), _ORDER)
        empty = b.or_(_tag(b, generation), ir.Constant(_I64, _CLOSED))
        self.spin_until(b, fn, lambda: b.icmp_unsigned("==", self.load(b, self.state), empty))
        block, blocked = fn.append_basic_block("block"), fn.append_basic_block("blocked")
        b.cbranch(b.icmp_unsigned("!=", self.load(b, self.state), empty), block, blocked)
        b.position_at_end(block)
        self.store(b, one, self.caller_blocks)
        self.call(b, "pthread_mutex_lock", self.mutex)
        self.wait_while(b, fn, self.done,
                        lambda: b.icmp_unsigned("!=", self.load(b, self.state), empty))  # fmt: skip
        self.call(b, "pthread_mutex_unlock", self.mutex)
        self.store(b, zero, self.caller_blocks)
        b.branch(blocked)
        b.position_at_end(blocked)
        self.store(b, zero, self.busy)
        b.ret_void()

        b.position_at_end(release)  # no worker could start: run alone
        self.store(b, zero, self.busy)
        b.branch(serial)

        b.position_at_end(serial)
        _call_task(b, task, ctx, zero, n)
        b.ret_void()

    def reset_counters(self, b: ir.IRBuilder, fn: ir.Function, participants: ir.Value) -> None:
        """Zeroes the claim counters of participants [0, participants)."""
        entry = b.block
        loop, out = fn.append_basic_block("reset"), fn.append_basic_block("reset.out")
        b.branch(loop)
        b.position_at_end(loop)
        q = b.phi(_I64)
        q.add_incoming(ir.Constant(_I64, 0), entry)
        counter = b.gep(self.next_chunk, [ir.Constant(_I32, 0), b.mul(q, _COUNTER_STRIDE)])
        self.store(b, ir.Constant(_I64, 0), counter)
        step = b.add(q, ir.Constant(_I64, 1))
        q.add_incoming(step, loop)
        b.cbranch(b.icmp_unsigned("<", step, participants), loop, out)
        b.position_at_end(out)

    def set_threads(self) -> None:
        fn = self._function(self.set_threads_name, ir.FunctionType(_VOID, [_I64]),
                            linkage="external")  # fmt: skip
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        self.store(b, fn.args[0], self.override)
        b.ret_void()


def runtime_module(
    triple: str, set_threads_name: str = SET_THREADS, export_trace: bool = False
) -> ir.Module:
    """The pool as an LLVM module for `triple`: `ember_parallel_for` and
    `set_threads_name` are external (with `export_trace`, the trace's
    functions too), everything else internal."""
    module = ir.Module(name="ember_runtime")
    module.triple = triple
    _Pool(module, set_threads_name, export_trace).build()
    return module


def set_threads_stub(module: ir.Module, name: str) -> None:
    """A `name(int64_t)` that does nothing, for a library with no parallel
    loops (so its C API is the same whatever it was compiled with)."""
    fn = ir.Function(module, ir.FunctionType(_VOID, [_I64]), name)
    ir.IRBuilder(fn.append_basic_block("entry")).ret_void()
