/*
 * Copyright (c) 2026 The userdt authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/*
 * OpenBSD's tracepoints from Linux's: which Linux events feed each of
 * dt_prov_static.c's probes that Linux can give a meaning, and how
 * their fields become OpenBSD's arguments (dt-abi order and types).
 * Thread ids are Linux's, without OpenBSD's 100000 offset (design
 * decision 11).  Decoders run on the perf reader thread ([R]).
 */
#include <stdio.h>
#include <string.h>

#include "dt_tp_stk.h"
#include "dt_tp_task.h"
#include "dt_tp_var.h"
#include "systab.h"

/* Linux's task state bits, as sched_switch reports prev_state. */
#define DT_TASK_INTERRUPTIBLE	0x01
#define DT_TASK_UNINTERRUPTIBLE	0x02
#define DT_TASK_STOPPED		0x04
#define DT_TASK_TRACED		0x08
#define DT_TASK_PARKED		0x40
#define DT_TASK_IDLE		0x80
#define DT_TASK_REPORT		0xff	/* the bits that are a state */

/* x86 page fault error code bits, and OpenBSD's vm_fault_t/vm_prot_t. */
#define DT_PF_PROT	0x01
#define DT_PF_WRITE	0x02
#define DT_PF_INSTR	0x10
#define DT_VM_FAULT_INVALID	0
#define DT_VM_FAULT_PROTECT	1
#define DT_PROT_READ		1
#define DT_PROT_WRITE		2
#define DT_PROT_EXEC		4

const struct dt_tp_srcdef dt_tp_known[DT_S_NKNOWN] = {
	[DT_S_SWITCH] = { "sched", "sched_switch",
	    { "prev_comm", "prev_pid", "prev_state", "next_comm",
	    "next_pid" } },
	[DT_S_WAKEUP] = { "sched", "sched_wakeup", { "pid", "target_cpu" } },
	[DT_S_WAKEUP_NEW] = { "sched", "sched_wakeup_new",
	    { "pid", "target_cpu" } },
	[DT_S_FORK] = { "sched", "sched_process_fork", { "child_pid" } },
	[DT_S_SYSENTER] = { "raw_syscalls", "sys_enter", { "id" } },
	[DT_S_SYSEXIT] = { "raw_syscalls", "sys_exit", { "id", "ret" } },
	[DT_S_PFUSER] = { "exceptions", "page_fault_user",
	    { "address", "error_code" } },
	[DT_S_PFKERNEL] = { "exceptions", "page_fault_kernel",
	    { "address", "error_code" } },
	[DT_S_KMALLOC] = { "kmem", "kmalloc", { "ptr", "bytes_req",
	    "gfp_flags" } },
	[DT_S_KFREE] = { "kmem", "kfree", { "ptr" } },
};


static bool	dt_tp_off_cpu(const struct dt_tp_probe *,
		    const struct dt_tp_src *, const struct dt_tp_sample *,
		    struct dt_evt *);
static bool	dt_tp_on_cpu(const struct dt_tp_probe *,
		    const struct dt_tp_src *, const struct dt_tp_sample *,
		    struct dt_evt *);
static bool	dt_tp_sleep(const struct dt_tp_probe *,
		    const struct dt_tp_src *, const struct dt_tp_sample *,
		    struct dt_evt *);
static bool	dt_tp_stop(const struct dt_tp_probe *,
		    const struct dt_tp_src *, const struct dt_tp_sample *,
		    struct dt_evt *);
static bool	dt_tp_enqueue(const struct dt_tp_probe *,
		    const struct dt_tp_src *, const struct dt_tp_sample *,
		    struct dt_evt *);
static bool	dt_tp_dequeue(const struct dt_tp_probe *,
		    const struct dt_tp_src *, const struct dt_tp_sample *,
		    struct dt_evt *);
static bool	dt_tp_wakeup(const struct dt_tp_probe *,
		    const struct dt_tp_src *, const struct dt_tp_sample *,
		    struct dt_evt *);
static bool	dt_tp_fork(const struct dt_tp_probe *,
		    const struct dt_tp_src *, const struct dt_tp_sample *,
		    struct dt_evt *);
static bool	dt_tp_sys(const struct dt_tp_probe *,
		    const struct dt_tp_src *, const struct dt_tp_sample *,
		    struct dt_evt *);
static bool	dt_tp_fault(const struct dt_tp_probe *,
		    const struct dt_tp_src *, const struct dt_tp_sample *,
		    struct dt_evt *);
static bool	dt_tp_malloc(const struct dt_tp_probe *,
		    const struct dt_tp_src *, const struct dt_tp_sample *,
		    struct dt_evt *);
static bool	dt_tp_free(const struct dt_tp_probe *,
		    const struct dt_tp_src *, const struct dt_tp_sample *,
		    struct dt_evt *);

/*
 * OpenBSD's tracepoints that Linux can feed, in dt_prov_static.c's
 * order.  Left out, for want of a Linux event with that meaning:
 * remain__cpu (Linux traces no switch to the same task), unsleep,
 * steal, unstop, uvm's map and pool events, vfs, vmm, smr, refcnt,
 * rwlock.
 */
const struct dt_tp_obsd dt_tp_obsd[] = {
	{ "sched", "dequeue", dt_tp_dequeue, { DT_S_SWITCH, -1 }, 2,
	    { "pid_t", "pid_t" }, false, false, NULL },
	{ "sched", "enqueue", dt_tp_enqueue,
	    { DT_S_SWITCH, DT_S_WAKEUP, DT_S_WAKEUP_NEW }, 2,
	    { "pid_t", "pid_t" }, false, false, NULL },
	{ "sched", "fork", dt_tp_fork, { DT_S_FORK, -1 }, 3,
	    { "pid_t", "pid_t", "int" }, false, false, NULL },
	{ "sched", "off__cpu", dt_tp_off_cpu, { DT_S_SWITCH, -1 }, 2,
	    { "pid_t", "pid_t" }, false, false, NULL },
	/*
	 * The switch's stacks are the outgoing thread's: its own, kept.
	 * From perf's switch-in records, which miss no switch (dt_tp_perf.h),
	 * sched_switch's where the kernel has none.
	 */
	{ "sched", "on__cpu", dt_tp_on_cpu, { DT_S_SWITCH, -1 }, 0,
	    { NULL }, true, true, NULL },
	{ "sched", "sleep", dt_tp_sleep, { DT_S_SWITCH, -1 }, 0,
	    { NULL }, false, false, NULL },
	{ "sched", "stop", dt_tp_stop, { DT_S_SWITCH, -1 }, 0,
	    { NULL }, false, false, NULL },
	{ "sched", "wakeup", dt_tp_wakeup, { DT_S_WAKEUP, -1 }, 3,
	    { "pid_t", "pid_t", "int" }, false, false, NULL },
	{ "raw_syscalls", "sys_enter", dt_tp_sys, { DT_S_SYSENTER, -1 }, 1,
	    { "register_t" }, false, false, "id >= 0" },
	{ "raw_syscalls", "sys_exit", dt_tp_sys, { DT_S_SYSEXIT, -1 }, 1,
	    { "register_t" }, false, false, "id >= 0" },
	{ "uvm", "fault", dt_tp_fault, { DT_S_PFUSER, DT_S_PFKERNEL, -1 }, 3,
	    { "vaddr_t", "vm_fault_t", "vm_prot_t" }, false, false, NULL },
	{ "uvm", "malloc", dt_tp_malloc, { DT_S_KMALLOC, -1 }, 4,
	    { "int", "void *", "size_t", "int" }, false, false, "" },
	{ "uvm", "free", dt_tp_free, { DT_S_KFREE, -1 }, 3,
	    { "int", "void *", "size_t" }, false, false, "ptr != 0" },
};
const unsigned int dt_tp_nobsd = sizeof(dt_tp_obsd) / sizeof(dt_tp_obsd[0]);

static bool
dt_tp_off_cpu(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, struct dt_evt *ev)
{
	pid_t next = (pid_t)dt_tp_f(src, F_NEXT_PID, s);

	(void)tpp;
	ev->dtev_args[0] = next;
	ev->dtev_args[1] = dt_tp_task_tgid(next);
	return true;
}

/*
 * The incoming thread: its identity, and the stacks it left the CPU
 * with (dt_tp_stk.h), where it resumes, as dt(4)'s on__cpu shows them.
 */
static bool
dt_tp_on_cpu(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, struct dt_evt *ev)
{
	pid_t next;

	(void)tpp;
	if (s->ts_swin) {
		/* The sample is the incoming thread's; comm as for any. */
		dt_tp_stk_on(s->ts_tid, ev);
		return true;
	}
	next = (pid_t)dt_tp_f(src, F_NEXT_PID, s);
	ev->dtev_tid = next;
	ev->dtev_pid = dt_tp_task_tgid(next);
	dt_tp_stk_on(next, ev);
	if (next == 0)
		snprintf(ev->dtev_comm, DTMAXCOMLEN, "idle%u", s->ts_cpu);
	else
		dt_tp_fcomm(src, F_NEXT_COMM, s, ev->dtev_comm);
	return true;
}

static bool
dt_tp_sleep(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, struct dt_evt *ev)
{
	(void)tpp;
	(void)ev;
	return (dt_tp_f(src, F_PREV_STATE, s) & (DT_TASK_INTERRUPTIBLE |
	    DT_TASK_UNINTERRUPTIBLE | DT_TASK_PARKED | DT_TASK_IDLE)) != 0;
}

static bool
dt_tp_stop(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, struct dt_evt *ev)
{
	(void)tpp;
	(void)ev;
	return (dt_tp_f(src, F_PREV_STATE, s) & (DT_TASK_STOPPED |
	    DT_TASK_TRACED)) != 0;
}

/*
 * A thread goes on a run queue when it is woken (a new one too) or when
 * it leaves the CPU still runnable (preempted, yielding).
 */
static bool
dt_tp_enqueue(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, struct dt_evt *ev)
{
	pid_t tid;

	if (src == tpp->tpp_srcs[0]) {
		if ((dt_tp_f(src, F_PREV_STATE, s) & DT_TASK_REPORT) != 0)
			return false;
		if ((tid = (pid_t)dt_tp_f(src, F_PREV_PID, s)) == 0)
			return false;
		ev->dtev_args[0] = tid;
		ev->dtev_args[1] = ev->dtev_pid;
		return true;
	}
	tid = (pid_t)dt_tp_f(src, F_WK_PID, s);
	ev->dtev_args[0] = tid;
	ev->dtev_args[1] = dt_tp_task_tgid(tid);
	return true;
}

/* The scheduler takes the next thread off its run queue to run it. */
static bool
dt_tp_dequeue(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, struct dt_evt *ev)
{
	pid_t next = (pid_t)dt_tp_f(src, F_NEXT_PID, s);

	(void)tpp;
	if (next == 0)
		return false;
	ev->dtev_args[0] = next;
	ev->dtev_args[1] = dt_tp_task_tgid(next);
	return true;
}

static bool
dt_tp_wakeup(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, struct dt_evt *ev)
{
	pid_t tid = (pid_t)dt_tp_f(src, F_WK_PID, s);

	(void)tpp;
	ev->dtev_args[0] = tid;
	ev->dtev_args[1] = dt_tp_task_tgid(tid);
	ev->dtev_args[2] = (register_t)(int)dt_tp_f(src, F_WK_CPU, s);
	return true;
}

/*
 * Linux says nothing of the CPU the child will run on when it forks;
 * the parent's is where it starts unless the balancer moves it.
 */
static bool
dt_tp_fork(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, struct dt_evt *ev)
{
	pid_t child = (pid_t)dt_tp_f(src, F_CHILD_PID, s);

	(void)tpp;
	ev->dtev_args[0] = child;
	ev->dtev_args[1] = dt_tp_task_tgid(child);
	ev->dtev_args[2] = s->ts_cpu;
	return true;
}

/*
 * The system call's number as the syscall provider numbers it (design
 * decision 5: OpenBSD's where the call is shared), so that scripts
 * keyed on OpenBSD numbers count the same calls.  sys_exit also gives
 * the return value in arg1, beyond OpenBSD's one argument.
 */
static bool
dt_tp_sys(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, struct dt_evt *ev)
{
	const struct systab_ent *se;
	long id = (long)dt_tp_f(src, F_SC_ID, s);

	(void)tpp;
	if (id < 0)
		return false;
	se = systab_by_linux(id);
	ev->dtev_args[0] = se != NULL ? se->se_num :
	    SYSTAB_LINUX_ONLY + id;
	if (src->tps_f[F_SC_RET] != NULL)
		ev->dtev_args[1] = (register_t)dt_tp_f(src, F_SC_RET, s);
	return true;
}

static bool
dt_tp_fault(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, struct dt_evt *ev)
{
	uint64_t err = dt_tp_f(src, F_PF_ERR, s);

	(void)tpp;
	ev->dtev_args[0] = (register_t)dt_tp_f(src, F_PF_ADDR, s);
	ev->dtev_args[1] = (err & DT_PF_PROT) ? DT_VM_FAULT_PROTECT :
	    DT_VM_FAULT_INVALID;
	ev->dtev_args[2] = (err & DT_PF_INSTR) ? DT_PROT_EXEC :
	    (err & DT_PF_WRITE) ? DT_PROT_WRITE : DT_PROT_READ;
	return true;
}

/* Linux's allocator has no malloc(9) types: arg0 is always 0. */
static bool
dt_tp_malloc(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, struct dt_evt *ev)
{
	(void)tpp;
	ev->dtev_args[0] = 0;
	ev->dtev_args[1] = (register_t)dt_tp_f(src, F_KM_PTR, s);
	ev->dtev_args[2] = (register_t)dt_tp_f(src, F_KM_BYTES, s);
	ev->dtev_args[3] = (register_t)(int)dt_tp_f(src, F_KM_GFP, s);
	return true;
}

/* kfree does not know the size; a NULL free is not a free. */
static bool
dt_tp_free(const struct dt_tp_probe *tpp, const struct dt_tp_src *src,
    const struct dt_tp_sample *s, struct dt_evt *ev)
{
	(void)tpp;
	ev->dtev_args[0] = 0;
	ev->dtev_args[1] = (register_t)dt_tp_f(src, F_KM_PTR, s);
	ev->dtev_args[2] = 0;
	return ev->dtev_args[1] != 0;
}

