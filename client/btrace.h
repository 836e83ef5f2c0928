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
 * btrace: shared declarations of the bt(5) interpreter.
 */
#ifndef BTRACE_H
#define BTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <dev/dt/dtvar.h>

/* Longest string str() keeps, as OpenBSD's btrace (127 + NUL). */
#define STRLEN		128

/* Run-time values. */
enum bt_vtype {
	VT_NIL,			/* unset: 0 as a number, "" as a string */
	VT_INT,
	VT_STR,
	VT_TUPLE,
};

#define VF_UNSIGNED	0x1	/* print as unsigned (argN of non-int type) */

struct bt_value {
	enum bt_vtype		 v_type;
	int			 v_flags;
	long			 v_int;
	const char		*v_str;
	struct bt_value		*v_tup;
	size_t			 v_ntup;
};

/* Position of a token in the script, for messages. */
struct bt_pos {
	int			 p_line;
	int			 p_col;		/* column of the token's last char */
	size_t			 p_off;		/* offset of the token's last char */
};

/* Expressions. */
enum bt_ekind {
	E_INT, E_STR, E_NIL, E_BUILTIN, E_GVAR, E_LVAR, E_MAPGET, E_TUPLE,
	E_TMEMBER, E_BINOP, E_UNOP, E_COND, E_STRFN, E_KSYM, E_USYM,
	E_STRFTIME,
};

enum bt_builtin {
	B_PID, B_TID, B_COMM, B_CPU, B_NSECS, B_ELAPSED, B_KSTACK, B_USTACK,
	B_ARG0, B_ARG1, B_ARG2, B_ARG3, B_ARG4, B_ARG5, B_ARG6, B_ARG7,
	B_ARG8, B_ARG9, B_RETVAL, B_PROBE, B_NARGS, B_ERRNO, B_CPID,
	B_UID, B_GID, B_CGROUP,
	B_ARGNAME,	/* args.NAME: be_str, an argN once the probe is known */
};

/* Binary and unary operators; the token values double as operators. */
enum bt_op {
	OP_ADD = 1, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_BAND, OP_BOR, OP_XOR,
	OP_SHL, OP_SHR, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_LAND,
	OP_LOR, OP_NEG, OP_NOT, OP_BNOT,
};

struct bt_var;

struct bt_expr {
	enum bt_ekind		 be_kind;
	int			 be_op;		/* bt_op or bt_builtin */
	long			 be_int;
	char			*be_str;
	struct bt_var		*be_var;	/* E_GVAR, E_LVAR, E_MAPGET */
	struct bt_expr		*be_left;	/* operands, tuple/key lists */
	struct bt_expr		*be_right;
	struct bt_expr		*be_third;	/* E_COND else branch */
	struct bt_expr		*be_next;	/* next in a list */
	int			 be_depth;	/* height of this tree */
	struct bt_pos		 be_pos;
};

/* Statements. */
enum bt_skind {
	S_NOP, S_STORE, S_MAPSTORE, S_AGG, S_PRINTF, S_PRINT, S_CLEAR,
	S_ZERO, S_DELETE, S_EXIT, S_TIME, S_IF, S_FOR, S_WHILE, S_BREAK,
	S_CONTINUE, S_BLOCK,
};

/* Map aggregations, also the kind of a map's entries. */
enum bt_agg {
	A_NONE, A_VALUE, A_COUNT, A_SUM, A_MIN, A_MAX, A_AVG, A_HIST, A_LHIST,
	A_STATS,
};

struct bt_stmt {
	enum bt_skind		 bs_kind;
	int			 bs_agg;	/* S_AGG: bt_agg */
	int			 bs_op;		/* compound assignment: bt_op */
	struct bt_var		*bs_var;	/* target variable or map */
	struct bt_expr		*bs_keys;	/* map keys, NULL if none */
	struct bt_expr		*bs_expr;	/* value, condition, arguments */
	struct bt_stmt		*bs_body;	/* if/for/while/block body */
	struct bt_stmt		*bs_else;
	struct bt_stmt		*bs_next;
	struct bt_pos		 bs_pos;
};

struct map;

/* Global (@) and local ($) variables. */
struct bt_var {
	char			*bv_name;	/* "" for the unnamed map @ */
	int			 bv_local;
	int			 bv_ismap;	/* used with keys or aggregations */
	int			 bv_agg;	/* bt_agg class of the map */
	long			 bv_lmin, bv_lmax, bv_lstep; /* lhist range */
	int			 bv_order;	/* rank for printing at exit */
	struct bt_value		 bv_value;	/* scalar value */
	struct map		*bv_map;
	struct bt_var		*bv_next;
};

/* Probes: BEGIN, END or prov:func:name. */
enum bt_ptype { P_BEGIN, P_END, P_PROBE };

struct bt_probe {
	enum bt_ptype		 bp_type;
	char			*bp_prov;
	char			*bp_func;	/* or the unit of timer probes */
	char			*bp_name;	/* NULL for timer probes */
	long			 bp_number;	/* timer probe rate */
	uint64_t		 bp_nsecs;
	uint32_t		 bp_pbn;	/* probe number once matched */
	int			 bp_wild;	/* 1 a pattern's match, 2 the pattern */
	int			 bp_shared;	/* its probe enabled by another */
	int			 bp_latent;	/* not enabled: its calls timed
						   by the hooks (bt_lat.c) */
	struct dtioc_req	 bp_req;
	struct bt_probe		*bp_next;
	struct bt_pos		 bp_pos;
};

struct bt_rule {
	struct bt_probe		*br_probes;
	struct bt_expr		*br_filter;
	struct bt_stmt		*br_action;
	struct bt_var		*br_locals;
	uint64_t		 br_evtflags;
	struct bt_rule		*br_next;
};

/* bt_lex.c and bt_parse.c */
extern struct bt_rule	*g_rules;
extern struct bt_var	*g_vars;
extern int		 g_nprobes;
extern const char	*g_filename;	/* script name shown in messages */
extern const char	*g_source;
extern size_t		 g_srclen;
int			 bt_parse(const char *, size_t, const char *, int,
			    char **);
/*
 * Whether script argument s is a number, then *v: decimal only ("0x10"
 * stays a string, as OpenBSD's), and in a long's range.
 */
int			 parg_number(const char *s, long *v);
const char		*did_you_mean(const char *, const char *const *,
			    size_t);
void			 comm_note(const struct dt_evt *);
void			 comm_of(const struct dt_evt *, char *, size_t);
int			 printf_check(const struct bt_expr *,
			    void (*)(const struct bt_pos *, const char *));
void			 bt_posmsg(const struct bt_pos *, const char *, ...)
			    __attribute__((format(printf, 2, 3)));

/* bt_value.c */
void			*tmp_alloc(size_t);
char			*tmp_strdup(const char *);
/*
 * The len bytes at s as btrace prints a string a traced process chose
 * (a comm, a path, a symbol): control characters and DEL escaped as C
 * does (\n, \t, ..., else \ooo, as vis(3) with VIS_CSTYLE | VIS_OCTAL),
 * a backslash doubled, so nothing it wrote can drive the terminal that
 * shows root's output.  Scratch memory (tmp_*), main thread.
 */
char			*tmp_vis(const char *s, size_t len);
char			*tmp_printf(const char *, ...)
			    __attribute__((format(printf, 1, 2)));
void			 tmp_reset(void);
struct tmp_mark {
	void			*tm_chunk;
	size_t			 tm_used;
};
struct tmp_mark		 tmp_mark(void);
void			 tmp_release(struct tmp_mark);
void			*xmalloc(size_t);
void			*xcalloc(size_t, size_t);
char			*xstrdup(const char *);
struct bt_value		 val_int(long);
struct bt_value		 val_str(const char *);
void			 val_copy(struct bt_value *, const struct bt_value *);
void			 val_free(struct bt_value *);
int			 val_equal(const struct bt_value *,
			    const struct bt_value *);
int			 val_cmp(const struct bt_value *,
			    const struct bt_value *);
uint64_t		 val_hash(const struct bt_value *);
const char		*val2str(const struct bt_value *);
const char		*val2key(const struct bt_value *);

/* bt_eval.c */
struct bt_evt_ctx {
	struct dt_evt		*ec_evt;
	int			 ec_fake;	/* BEGIN or END */
	struct bt_rule		*ec_rule;
};
extern uint64_t		 g_filtered;
extern int		 g_rterror;
extern uint64_t		 g_start_nsecs;
int			 rule_eval(struct bt_rule *, struct dt_evt *, int);
/* bt_prep.c */
uint64_t		 rule_evtflags(struct bt_rule *);
/* args.NAME of r's expressions made argN by resolve(name) (>= 0). */
void			 rule_argnames(struct bt_rule *,
			    int (*)(const char *, const struct bt_pos *));
/* bt_proc.c: uid, gid and cgroup of a process, from /proc. */
long			 proc_uid(pid_t);
long			 proc_gid(pid_t);
long			 proc_cgroup(pid_t);
/* bt_tpfields.c: a tracepoint's argument names, from tracefs. */
const char		*tp_argname(const struct dtioc_probe_info *, int);
int			 tp_argindex(const struct dtioc_probe_info *,
			    const char *);
struct bt_value		 expr_eval(struct bt_expr *, struct bt_evt_ctx *);
void			 rt_error(const struct bt_pos *, const char *, ...)
			    __attribute__((format(printf, 2, 3)));

/* bt_map.c */
struct map		*map_new(void);
void			 map_free(struct map *);
size_t			 map_len(struct map *);
struct bt_value		*map_lookup(struct map *, const struct bt_value *);
void			 map_store(struct map *, const struct bt_value *,
			    const struct bt_value *);
void			 map_agg(struct bt_var *, const struct bt_value *,
			    int, long);
/* What one event, or dtd's fold of many (bt_agg.c), adds to an entry. */
struct map_part {
	long			 mp_count;
	long			 mp_sum;
	long			 mp_min;
	long			 mp_max;
	long			 mp_bucket;	/* hist: class; lhist: bound */
	int			 mp_bkind;	/* lhist: -1 under, 1 over */
};
void			 map_merge(struct bt_var *, const struct bt_value *,
			    int, const struct map_part *);
void			 map_delete(struct map *, const struct bt_value *);
void			 map_clear(struct map *);
void			 map_zero(struct map *);
void			 map_print(struct bt_var *, size_t, long);
void			 map_keys(struct map *, struct bt_value **,
			    struct bt_value **, size_t *);
void			 maps_print_all(void);

/* bt_printf.c */
void			 bt_printf(struct bt_expr *, struct bt_evt_ctx *);

/* bt_dev.c */
extern const char	*g_devpath;
extern int		 g_verbose;
extern pid_t		 g_pidfilter;
extern int		 g_allprocs;
extern int		 g_lossless;
extern int		 g_treefilter;
extern struct dtioc_probe_info *dt_dtpis;
extern size_t		 dt_ndtpi;
int			 dev_open(void);
void			 dev_list(int);
int			 rules_run(int);
void			 run_end_soon(void);
void			 dev_err(const char *) __attribute__((noreturn));
void			 dtpi_cache(int);
int			 dtai_hasstr(int, struct dtioc_probe_info *);

/* bt_dev_rules.c */
void			 rules_setup(int, int *);
void			 rules_teardown(int, int);
int			 record_apply(int, struct dt_evt *);

/* bt_check.c */
int			 dev_unprivileged(void);
const char		*check_missing_prov(const char *);
void			 check_probes(void);

/* bt_watch.c */
void			 watch_open(pid_t);
void			 watch_start(void);
const char		*dev_argstr(struct dt_evt *, int);
int			 dev_strarg(struct dt_evt *, int);
void			 dtai_cache(int, struct dtioc_probe_info *);

/*
 * bt_push.c: filters at the source (dtvar.h, DTIOCPRBFILTER).
 * push_probe() hands dtd, after DTIOCPRBENABLE of pbn and before
 * DTIOCRECORD, the part of its rules' filters dtd can evaluate, so
 * dtd only drops what every rule of the probe would reject; btrace
 * still applies every filter whole.  BTRACE_NOPUSH=1 turns it off.
 * push_report() adds dtd's count to -v's statistics when a filter was
 * pushed.
 */
void			 push_probe(int fd, uint32_t pbn);
void			 push_report(int fd);
/*
 * push_exact(): hand dtd e as pbn's filter when what dtd evaluates is
 * exactly e (nothing left out): 1 when dtd took it.  With comm (the
 * probe enabled with DTEVT_EXECNAME, execname), dtd judges the events
 * whose comm it sees as btrace would and sends the others as records,
 * which this btrace's rules judge (DTF_F_UNSURE).  Under -p, the
 * process's pid is ANDed in; e NULL sets no filter at all, replacing
 * what push_probe() set.
 */
int			 push_exact(int fd, const struct bt_expr *e,
			    uint32_t pbn, int execname);

/*
 * bt_agg.c: aggregations at the source (dtvar.h, DTIOCPRBAGG).
 * agg_push(), after the enables and filters and before DTIOCRECORD,
 * hands dtd the rules that only aggregate event fields, on probes no
 * other rule needs events of; agg_sync() merges what dtd folded since
 * into the maps (before a map is printed, cleared, zeroed or deleted
 * from, and at the end), agg_report() adds to -v.  BTRACE_NOPUSH=1
 * turns it off.  Main thread.
 */
void			 agg_push(int fd);
/*
 * bt_aggspec.c: agg_stmt_spec(), statement s's spec (as zeroed first),
 * 0 when dtd cannot fold it; agg_rule_ok(), whether rule r only
 * aggregates, on probes no other rule has, each statement foldable;
 * agg_stmts(), r's statements, blocks opened, into out[DTA_PCBAGGS]
 * (how many, -1 for more); agg_vflags(), DTF_F_INT32 for an argument
 * read as a C int (looks up pbn's argument types on fd);
 * agg_field() and agg_func(), the DTF_* of a builtin and the DTA_* of
 * an aggregation (0: none); agg_haskey(), whether as keys by f;
 * agg_var_used(), whether some rule reads bv otherwise than through
 * what merges first.  Main thread.
 */
int			 agg_field(const struct bt_expr *e);
int			 agg_func(int agg);
int			 agg_var_used(const struct bt_var *bv);
int			 agg_haskey(const struct dtioc_aggspec *as, int f);
int			 agg_stmt_spec(const struct bt_stmt *s,
			    struct dtioc_aggspec *as);
void			 agg_vflags(int fd, struct dtioc_aggspec *as,
			    uint32_t pbn);
int			 agg_stmts(struct bt_stmt *s, struct bt_stmt **out,
			    int n);
int			 agg_rule_ok(const struct bt_rule *r);
/*
 * bt_lat.c: a call's latency folded by the hooks (dtvar.h's DTF_LAT).
 * lat_plan(), before the enables: finds the pattern, marks its entry
 * probes bp_latent (not enabled).  lat_rule(), lat_stmt(),
 * lat_delete(): whether a rule is one of its return rules, a statement
 * its aggregation (its value DTF_LAT), its delete (left to the fold).
 * lat_finish(), from agg_push(): enables the entries as events unless
 * dtd took every return rule (folded), which agg_push() asks for
 * first, all or none.  Main thread.
 */
void			 lat_plan(void);
int			 lat_rule(const struct bt_rule *r);
int			 lat_stmt(const struct bt_stmt *s);
int			 lat_delete(const struct bt_stmt *s);
void			 lat_finish(int fd, int folded);
void			 agg_sync(void);
/* Whether dtd folds into bv (DTIOCPRBAGG): its merge comes first. */
int			 agg_folds(const struct bt_var *bv);
/*
 * agg_settle_poll(): the command ended: whether dtd has put
 * its last events (bounded), one look a call, for a loop that reads
 * between looks (a lossless drain waits for the reader's room).
 * agg_settled(): whether dtd has folded or put every event
 * stamped before t (CLOCK_REALTIME ns), or folds no rule of ours: at
 * any other end of tracing (a signal, exit()) the main loop reads on
 * until then (bt_dev.c), so that what dtd still holds of the time
 * before the end is folded before the last merge, or read, as a read
 * of the events until then would have seen them.  agg_done(): whether
 * dtd has put every event stamped before t, whatever it folds: after
 * exit(), so that what came late is in the late count read next.  Main
 * thread.
 */
int			 agg_settle_poll(int fd);
int			 agg_settled(int fd, uint64_t t);
int			 agg_done(int fd, uint64_t t);
uint64_t		 agg_clock_ns(clockid_t clk);
void			 agg_report(void);
/*
 * While user stacks are folded in dtd, the main loop wakes every
 * agg_tick_ms() (0: never) and calls agg_tick(), which merges dtd's table
 * so that the processes behind it are met while they live.
 */
int			 agg_tick_ms(void);
void			 agg_tick(void);
/*
 * Whether dtd may fold r's aggregations on the probe of provider prov
 * under -c, for which it keys them by comm: the probe is enabled with
 * DTEVT_EXECNAME then.  Before the enables.
 */
int			 agg_wants_comm(const struct bt_rule *r,
			    const char *prov);
/*
 * -c: name the command's tree to dtd (DTIOCTREE), once its shell is
 * held at the gate and before the enables, unless BTRACE_NOPUSH is set;
 * 1 when dtd took it, so that tracepoints may be enabled with
 * DTEVT_TREE and their counts kept by the kernel (DTF_F_TREE); 2 when
 * it took it with DTTR_F_HOOKED too, asked for with hooked (the root
 * runs a shell the library enters): the syscall probes' kernel copy
 * then follows each static image of the tree from its exec.
 */
int			 agg_tree_name(int fd, int hooked);
/*
 * Whether rules may be folded in dtd (agg_push(), lat_plan()): not under
 * BTRACE_NOPUSH, nor under -c with the tree read from /proc alone.  After
 * ptree_open().
 */
int			 agg_pushable(void);

/*
 * bt_aggstk.c: dtd's stack table.  aggstk_fetch() reads from fd the
 * stacks of the entries the last DTIOCAGGREAD returned, 0 or -1
 * (warned).  aggstk_fill() puts stack id into
 * ev's kernel (kernel) or user stack as a record carries it and the
 * whole of it into dk: 1 when deeper than STACKTRACE_MAX (dk is then
 * g_deep for ev).  aggstk_overflow(): dtd's dtsr_overflow as last read.
 */
struct deep_stacks;
int			 aggstk_fetch(int fd);
int			 aggstk_fill(struct dt_evt *ev, struct deep_stacks *dk,
			    uint32_t id, int kernel);
uint64_t		 aggstk_overflow(void);
const char		*evt_argstr(struct dt_evt *, int);

/* bt_match.c */
const char		*dtpi_func(const struct dtioc_probe_info *);
const char		*pi_linux_name(const struct dtioc_probe_info *);
struct dtioc_probe_info	*probe_find(struct bt_probe *);
const char		*probe_name(struct bt_probe *);
void			 probe_notfound(struct bt_probe *, const char *)
			    __attribute__((noreturn));
void			 probe_expand(struct bt_probe *);
int			 pi_listed(const struct dtioc_probe_info *,
			    const char *);

/* bt_syscalls.c (generated) */
const char		*syscall_name(unsigned int);

/* bt_comm.c: its cache of names, freed by syms_cleanup() */
extern struct comm_ent	*comm_cache;

/* bt_syms.c */
/*
 * An event's stacks whole, its continuation records gathered
 * (bt_dev_rules.c).
 */
struct deep_stacks {
	unsigned int		 dk_kn, dk_un;
	unsigned long		 dk_k[DTEV_DEEP_MAX];
	unsigned long		 dk_u[DTEV_DEEP_MAX];
};
extern const struct dt_evt *g_deep_ev;
extern const struct deep_stacks *g_deep;
const char		*stack_str(struct dt_evt *, int, int);
const char		*ksym_str(unsigned long);
const char		*usym_str(pid_t, unsigned long);
void			 syms_cleanup(void);

/* bt_cmd.c */
extern const char	*g_command;
extern int		 g_cmdout;
extern pid_t		 g_cpid;
/* dtd reads the calls no hook records: UDT_LAUNCH_KTREE_*, 0: not */
extern int		 g_cmdktree;
pid_t			 cmd_prepare(void);
void			 cmd_release(void);
/*
 * Whether -c's command, its first word, names a file the preload
 * library cannot enter: UDT_LAUNCH_STATIC or UDT_LAUNCH_SETID
 * (udt_launch.h), or 0 (dynamic, or not a plain word: a shell
 * construct, an assignment, a quote).
 */
int			 cmd_untraced(void);
int			 cmd_reaped(void);
void			 cmd_stop(void);
void			 cmd_ended(void);

/* bt_ptree.c */
int			 ptree_open(void);
void			 ptree_root(pid_t);
void			 ptree_shell(pid_t);
void			 ptree_sync(void);
int			 ptree_member(pid_t, const struct timespec *, int);
int			 ptree_member_upto(pid_t, const struct timespec *, int);
/*
 * Whether the tree is read from /proc alone (ptree_open() found no
 * process connector: not root, no CAP_NET_ADMIN), where a process gone
 * before its events are judged cannot be placed.
 */
int			 ptree_proc_only(void);
/* -c's shell, btrace's code under btrace's name until its exec. */
pid_t			 ptree_shell_pid(void);
void			 ptree_close(void);

/* bt_json.c */
extern int		 g_json;
extern int		 g_folded;

/* One row of a histogram: kind -1 below an lhist's min, 1 from its max. */
struct hrow {
	int		 hr_kind;
	long		 hr_key;
	long		 hr_count;
};

void			 json_str(FILE *, const char *);
void			 json_value(const struct bt_value *);
void			 json_key(const struct bt_value *);
void			 json_hist(const struct hrow *, size_t, long, long, long);

/* btrace.c */
extern int		 g_nargs;
extern int		 g_argsused;	/* the highest $N the script reads */
extern char		**g_vargs;
extern const char	*g_progname;
extern int		 g_evflush;
extern const char	*g_listpattern;
void			 bt_exit_flush(int) __attribute__((noreturn));

#endif /* BTRACE_H */
