/*
 * stack_reclaim.pml: Promela model of the reclaimable kernel stack state
 * machine (mm/stack_reclaim.c, include/linux/stack_reclaim.h and the hooks
 * in kernel/sched/sched.h __block_task(), kernel/sched/core.c
 * try_to_wake_up() and finish_task_switch(), kernel/fork.c free_task()).
 * Checked with spin by scripts/model.sh; CODE-MAP.txt maps every step to
 * the kernel function it mirrors.
 *
 * WHAT IS MODELLED
 *
 * One task p and every actor that touches its stack_reclaim_state word:
 *
 *   Task      p itself and the CPU it runs on: the annotated wait loop
 *             (set_current_state, condition check, schedule()), __schedule()
 *             up to context_switch() with the EEVDF choice between a plain
 *             dequeue (__block_task() while p is still on_cpu) and a delayed
 *             dequeue (sched_delayed; __block_task() later, from the pick
 *             of the delayed entity, when p is off the CPU), the remote
 *             wake list (sched_ttwu_pending()), being picked to run on the
 *             CPU it was enqueued on, and finally do_exit()'s last schedule
 *             and the RCU-delayed drop of its own task reference.
 *   Fts       finish_task_switch() for prev == p on the CPU p left: the
 *             switch-out hook, then finish_task() clearing on_cpu, then the
 *             rq unlock. It is a separate process because p may be enqueued
 *             and run on another CPU as soon as on_cpu is clear.
 *   Waker     try_to_wake_up(p, TASK_NORMAL) after publishing the wait
 *             condition `cond`; ROUNDS times. Holds a task reference.
 *   Racer     a second waker (NRACE bare wakeups, no condition of its own),
 *             racing Waker and the worker; holds a task reference.
 *   Shrinker  count_objects/scan_objects: the pending drain
 *             (stack_drain_pending(), stack_list_pending(): the entry's task
 *             reference dropped once p is listed), the list_lru walk with
 *             second-chance aging (stack_isolate()), unmap/free of the pages,
 *             and the final RECLAIMING -> RECLAIMED | RECLAIMING_IN_USE ->
 *             REPOPULATING (stack_reclaim_batch()). Runs NSHRINK times
 *             (memory pressure events, or passes of the idle work, see
 *             below). The same process also runs the drain delayed work
 *             (stack_drain_work_fn()) whenever a pending add kicked it, for
 *             as long as the model runs: all are the same
 *             stack_drain_pending(), and running them in one process loses
 *             no interleaving that matters: the bit and llist_del_all() give
 *             each pending entry to exactly one drain, and what that drain
 *             then does to p (its LRU state, list_lru_add(), its own
 *             reference) commutes with another drain's test of the bit.
 *             The idle pass (stack_idle_work_fn() -> stack_idle_list() ->
 *             stack_reclaim_batch()) is the same drain and the same walk
 *             with another age bar and a budget of young stacks after which
 *             the walk stops (LRU_STOP, p untouched). Ages are not modelled,
 *             so a Shrinker call covers it: rotate or reclaim are both
 *             choices, and a stopped walk is the count-only choice.
 *   Worker    stack_repopulate_work() of p's node (one node here, so one
 *             worker; its urgent-first order is moot for one task):
 *             llist_del_all, the allocation (stack_repopulate_sleeping();
 *             may fail NFAIL times, then p is requeued and retried),
 *             stack_install(), the REPOPULATING -> IN_USE move and
 *             wake_up_state(p, TASK_STACK_RECLAIM) (stack_repopulate_one()).
 *             Holds no task reference (none in the code either): p cannot
 *             exit before this wakeup, and try_to_wake_up() runs with
 *             preemption off (an RCU reader) so p's task_struct cannot be
 *             freed under it.
 *   Sysctl    vm.reclaimable_stacks written NTOGGLE times (on -> off -> on):
 *             stack_reclaim_set(); the block key goes off, the wake key stays.
 *
 * The state word (stack state + LRU state) changes only by atomic steps
 * that mirror atomic_try_cmpxchg() (see "Atomicity" below for which loops
 * are one step and which single-shot cmpxchgs keep their read separate);
 * every move asserts the legal transition table (stack_legal[], whose
 * WARN_ONCE is a bug), and every WARN in the code is an assert here.
 * Locks: p->pi_lock, the rq lock of each of 2 CPUs, the list_lru lock.
 * p->stack_reclaim_node is one list_head: `node` says which list it is on
 * (the list_lru, or the scan's `dispose` list); an add of a node that is
 * still linked asserts. p->stack_reclaim_llist is one llist_node shared by
 * two lockless lists: `ll` says where it is as a pending entry (on the
 * CPU's pending list, or on a drain's list taken off it by llist_del_all()
 * until the drain's walk has gone past p), `inq` whether it is on the
 * repopulation queue. Every llist_add() of it asserts it is on neither
 * (LLIST_FREE), so it is never on both at once. The pending list is per
 * CPU; one CPU's list is modelled (p is its only entry, so every add is
 * the first), with that CPU's bit in stack_pending_cpus (`pbit`): the add
 * sets it after its llist_add(), the drain test_and_clears it before its
 * llist_del_all(), and the drain work is kicked after the bit is set.
 *
 * WHAT IS ABSTRACTED, AND WHY
 *
 * - Memory ordering: Promela is sequentially consistent. The orderings the
 *   code relies on are all acquire/release or full barriers that make the
 *   kernel behave like this SC model: the cmpxchg is fully ordered; the
 *   hook runs before finish_task()'s smp_store_release(on_cpu, 0), which
 *   pairs with ttwu's smp_cond_load_acquire(on_cpu) / the wake list (so a
 *   waker that sees on_cpu == 0 sees the RECLAIMABLE store and the pending
 *   list add); __block_task() runs before the on_rq store-release that
 *   ttwu's smp_acquire__after_ctrl_dep() pairs with; pi_lock orders the
 *   waker's TASK_STACK_RECLAIM store before wake_up_state()'s match; the
 *   pending add's llist_add() is a full-barrier cmpxchg before its set of
 *   the CPU bit, and the drain's test_and_clear of the bit is a fully
 *   ordered RMW before its llist_del_all() (an xchg). The
 *   model checks the protocol under these orderings; a missing barrier is
 *   outside what it can show (the BUG_HOOK_AFTER_ON_CPU mutant shows what
 *   the on_cpu ordering protects).
 * - Pages: the dead pages below the saved SP are one unit `pres`; the live
 *   page is never touched. stack_unmap_dead() asserts the pages are there
 *   and p is not executing; stack_install() asserts they are missing (no
 *   double free, no double repopulation).
 * - The per-CPU pool: its only effect on the protocol is whether
 *   stack_repopulate_fast() succeeds under p->pi_lock, so that is a
 *   nondeterministic choice (pool has the pages and the GFP_NOWAIT memcg
 *   charge fits, or not); the refill work (stack_pool_refill(), process
 *   context, IRQs off on its CPU) touches no task state and is not a
 *   process. memcg_list_lru_alloc() fails nondeterministically; the
 *   worker's allocation fails at most NFAIL times (if memory never comes
 *   back nothing can be live).
 * - One task, two CPUs. select_task_rq() picks either CPU. Migration of a
 *   delayed (sched_delayed) task is not modelled separately: it needs
 *   on_cpu == 0 and the rq lock, exactly like the delayed pick here.
 * - ttwu_queue_wakelist() is taken nondeterministically whenever on_cpu is
 *   set (ttwu_queue_cond() is a heuristic). irq_work is taken to run at
 *   once (it only adds delay); queue_work/mod_delayed_work set a pending
 *   bit that the work clears when it starts (a work item never runs
 *   concurrently with itself).
 * - RCU: rcu counts readers inside try_to_wake_up() without a reference,
 *   and the scan's walk (IRQs off) while it removes p lazily, from taking
 *   the lru lock to dropping it; the task's own reference is dropped after
 *   a grace period (rcu == 0), as put_task_struct_rcu_user() -> call_rcu()
 *   does. Waiting for every reader, not only those that began before the
 *   call_rcu(), is stricter than RCU, but exact for the race-5 requeue:
 *   p is RECLAIMABLE there, so it exits only after the walk began.
 * - Preemption of a running p, the p == current branch of
 *   try_to_wake_up() (p blocks with IRQs off after __block_task(), so no
 *   wakeup of current can see a state other than IN_USE), RT/DL policy,
 *   NUMA node, memcg and counters, the debugfs "repopulate" (a waker
 *   without the wakeup, under pi_lock like one), CPU hotplug of the pool.
 * - Boundedness: ROUNDS wakeups by Waker, NRACE by Racer, NSHRINK shrinker
 *   calls, NTOGGLE sysctl writes; afterwards p exits. scripts/model.sh
 *   runs several small configurations rather than one big one (each is
 *   exhaustive; together they stay under a minute of CPU): core (2 rounds,
 *   2 shrinker calls), race (Racer), reclaim (3 shrinker calls), toggle
 *   (off -> on).
 *
 * PROPERTIES (scripts/model.sh)
 *
 *  (a) never running with pages missing: assert(pres) wherever p executes
 *      and is scheduled in, assert(!running) where pages are unmapped.
 *  (b) no lost wakeup: ltl `live` [] (cond -> <> !cond), pan -a -f (weak
 *      fairness); the safety run also reports a stuck task as an invalid
 *      end state.
 *  (c) no double free / double repopulation: asserts in unmap/install;
 *      the llist entry is never added twice, and never on the pending list
 *      and the repopulation queue at once (LLIST_FREE).
 *  (d) no use after the last reference: refcnt; the process that drops the
 *      last reference runs free_task() -> stack_reclaim_free(), which must
 *      find p not pending (its WARN) and leave p on no list, then sets
 *      `freed`; every access to p asserts !freed.
 *  (e) no leaked reference: a pending entry holds one, so a pending task
 *      the drain never takes would never be freed. When no process can
 *      move any more, init asserts that p is not pending (the drain work
 *      came after every add: the pbit/kick protocol) and that p, if it
 *      exited, was freed.
 *
 * DELIBERATE BUGS (spin -DBUG_xxx; each must make verification fail)
 *
 *  BUG_SRECL_AFTER_UNLOCK  waker writes TASK_STACK_RECLAIM after dropping
 *                          p->pi_lock (race 2)
 *  BUG_SWITCHOUT_STORE     switch-out PREPARE_RECLAIM -> RECLAIMABLE by a
 *                          plain store after the check, not a cmpxchg
 *                          (race 1)
 *  BUG_SHRINK_NO_INUSE     shrinker's final transition stores RECLAIMED
 *                          without looking for RECLAIMING_IN_USE (race 2)
 *  BUG_PENDING_NO_REF      the pending entry holds no task reference
 *                          (stack_pending_add() without get_task_struct(),
 *                          the drain without put_task_struct()): p can be
 *                          freed while pending, and the drain then walks
 *                          freed memory (race 4)
 *  BUG_PENDING_BIT_FIRST   stack_pending_add() sets its CPU's bit before
 *                          its llist_add(): a drain between them clears the
 *                          bit and finds the list empty, the one it kicks
 *                          finds the bit clear, and p stays pending with
 *                          its reference (property e)
 *  BUG_HOOK_AFTER_ON_CPU   the switch-out hook after finish_task() cleared
 *                          on_cpu
 *  BUG_WAKE_KEY_OFF        switching the feature off also disables the
 *                          wake key
 *  BUG_SCAN_LRU_FIRST      lazy removal publishes NOT_PRESENT before
 *                          unlinking (race 3)
 *  BUG_BLOCK_IGNORES_ON_CPU __stack_reclaim_block() goes straight on to
 *                          RECLAIMABLE even when p is still on its CPU
 */

#ifndef ROUNDS
#define ROUNDS	2
#endif
#ifndef NRACE
#define NRACE	1
#endif
#ifndef NSHRINK
#define NSHRINK	4
#endif
#ifndef NTOGGLE
#define NTOGGLE	2
#endif
#ifndef NFAIL
#define NFAIL	1
#endif

/* enum stack_state (include/linux/stack_reclaim.h) */
#define IN_USE			0
#define PREPARE_RECLAIM		1
#define RECLAIMABLE		2
#define RECLAIMING		3
#define RECLAIMING_IN_USE	4
#define RECLAIMED		5
#define REPOPULATING		6

/* enum stack_lru_state */
#define L_NOT_PRESENT	0
#define L_PENDING	1
#define L_NEW		2
#define L_OLD		3

/* which list p->stack_reclaim_node is on */
#define N_NONE		0
#define N_LRU		1	/* stack_lru */
#define N_DISPOSE	2	/* stack_reclaim_batch()'s walk->dispose */

/* where p->stack_reclaim_llist is as a pending entry (see also inq) */
#define LL_NONE		0
#define LL_PENDING	1	/* this CPU's stack_pending llist */
#define LL_DRAIN	2	/* stack_drain_pending()'s list, after llist_del_all() */

/* p->__state (include/linux/sched.h), as bits */
#define T_RUNNING		0
#define T_INTERRUPTIBLE		1
#define T_DEAD			2
#define T_WAKING		4
#define T_STACK_RECLAIM		8
#define TASK_NORMAL		T_INTERRUPTIBLE

/* stack_legal[from][to] of mm/stack_reclaim.c */
#define LEGAL(f, t) ((f) == (t) || \
	((f) == IN_USE && (t) == PREPARE_RECLAIM) || \
	((f) == PREPARE_RECLAIM && ((t) == IN_USE || (t) == RECLAIMABLE)) || \
	((f) == RECLAIMABLE && ((t) == IN_USE || (t) == RECLAIMING)) || \
	((f) == RECLAIMING && ((t) == RECLAIMING_IN_USE || (t) == RECLAIMED)) || \
	((f) == RECLAIMING_IN_USE && (t) == REPOPULATING) || \
	((f) == RECLAIMED && ((t) == IN_USE || (t) == REPOPULATING)) || \
	((f) == REPOPULATING && (t) == IN_USE))

/* ---- p->stack_reclaim_state, split into its two fields ---- */
byte st = IN_USE;
byte lru = L_NOT_PRESENT;

/* ---- the rest of p ---- */
bool pres = 1;		/* dead stack pages mapped (vm->nr_pages == STACK_PAGES) */
bool running = 1;	/* p executes on its own stack */
bool on_cpu = 1;	/* p->on_cpu */
bool on_rq = 1;		/* p->on_rq (queued, incl. sched_delayed) */
bool delayed = 0;	/* p->se.sched_delayed */
byte tcpu = 0;		/* task_cpu(p) */
byte tstate = T_RUNNING; /* p->__state */
bool pf = 0;		/* PF_RECLAIMABLE_STACK */
bool exiting = 0;	/* PF_EXITING */
bool wl = 0;		/* p on task_cpu(p)'s wake list */
byte node = N_NONE;	/* p->stack_reclaim_node */
byte ll = LL_NONE;	/* p->stack_reclaim_llist, as a pending entry */
bool inq = 0;		/* p->stack_reclaim_llist on its node's repopulator queue */
byte refcnt = 3;	/* p->usage: p itself (rcu_users), Waker, Racer; pending */
bool freed = 0;		/* free_task() done */

/* ---- global ---- */
byte pi = 0;		/* p->pi_lock */
byte rqlk[2];		/* rq->__lock of CPU 0 and 1 */
byte lrulock = 0;	/* the list_lru lock */
byte rcu = 0;		/* RCU readers without a reference */
bool fts = 0;		/* a finish_task_switch(prev = p) is pending */
byte fcpu = 0;		/* ... on this CPU, holding its rq lock */
bool pbit = 0;		/* this CPU's bit in stack_pending_cpus */
bool drain_pending = 0;	/* stack_drain_dwork queued */
bool repop_pending = 0;	/* the repopulator's dwork queued */
byte nfail = NFAIL;	/* worker allocations that may still fail */
bool block_key = 1;	/* stack_reclaim_block_key (booted with reclaimable_stacks=1) */
bool wake_key = 1;	/* stack_reclaim_wake_key */
bool sr_enabled = 1;	/* stack_reclaim_enabled */
bool cond = 0;		/* the wait condition p sleeps for */

ltl live { [] (cond -> <> !cond) }

/*
 * Atomicity. A cmpxchg retry loop whose body does nothing but decide from
 * the value it read (stack_set_lru(), __stack_reclaim_switched_out(), the
 * loops in __stack_reclaim_wakeup(), stack_isolate() and
 * stack_reclaim_batch()) is linearizable at its successful cmpxchg, so it
 * is one d_step here, and MOVE() asserts the transition legal
 * (stack_move()'s WARN_ONCE). A single-shot cmpxchg whose failure the code
 * handles or WARNs about (__stack_reclaim_block(), the fast path's and the
 * worker's WARN_ON_ONCE(!stack_move())) keeps its read and its cmpxchg as
 * separate steps, so the model sees it fail. Lock acquisitions are merged
 * with the step that follows and releases with the step before (they
 * commute with everything outside the lock), which is sound for these
 * short sections.
 */
#define MOVE(to, tl)	assert(LEGAL(st, to)); st = to; lru = tl

/* the LRU state __stack_reclaim_switched_out() publishes */
#define SWITCHED_LRU(l)	((l) == L_NOT_PRESENT -> L_PENDING : ((l) == L_OLD -> L_NEW : (l)))

/* stack_set_lru() */
inline stack_set_lru(l)
{
	d_step { assert(!freed); lru = l }
}

/* free_task() -> stack_reclaim_free(): leave the list_lru if on it */
inline free_task(ol)
{
	d_step { assert(!freed); ol = lru };
	if
	:: ol == L_PENDING ->
		/* WARN_ONCE "freed while pending": a pending entry holds a reference */
		assert(false)
	:: ol == L_NEW || ol == L_OLD ->
		/* stack_lru_add_del(p, false): under the lru lock, if still linked */
		atomic { lrulock == 0 -> if :: node == N_LRU -> node = N_NONE :: else fi }
	:: else
	fi;
	/* the task_struct is gone: nothing may still point at it */
	d_step { assert(node == N_NONE && ll == LL_NONE && !inq); freed = 1; ol = 0 }
}

/* put_task_struct(); whoever drops the last reference frees */
inline put_ref(last, ol)
{
	d_step { assert(!freed && refcnt > 0); refcnt--; last = (refcnt == 0) };
	if
	:: last -> free_task(ol); last = 0
	:: else
	fi
}

/*
 * Before any llist_add() of p->stack_reclaim_llist: it is free, on neither
 * the pending list (nor a drain's list) nor the repopulation queue. These
 * adds are the only steps that put it on either, so p is never on both.
 */
#define LLIST_FREE	assert(ll == LL_NONE && !inq)

/* stack_queue_repopulate(): llist_add + irq_work -> mod_delayed_work(0) */
#define QUEUE_REPOPULATE	LLIST_FREE; inq = 1; repop_pending = 1

/*
 * stack_pending_add(): p, alive, was just marked PENDING by the caller.
 * get_task_struct(), llist_add() onto this CPU's list (p is its only
 * entry, so the add is always the first), then cpumask_set_cpu() and the
 * irq_work that queues the drain work: a drain may run in between.
 */
inline pending_add()
{
#ifdef BUG_PENDING_BIT_FIRST
	pbit = 1;	/* BUG: cpumask_set_cpu() before the llist_add() */
#endif
	d_step {
		assert(!freed && refcnt > 0);
		LLIST_FREE;
#ifndef BUG_PENDING_NO_REF
		refcnt++;	/* get_task_struct() */
#endif
		ll = LL_PENDING
	};
#ifdef BUG_PENDING_BIT_FIRST
	drain_pending = 1	/* irq_work_queue() -> queue_delayed_work() */
#else
	d_step { pbit = 1; drain_pending = 1 }	/* the bit, then the kick */
#endif
}

/* stack_install(): map the missing pages; the caller owns the state */
inline stack_install()
{
	d_step {
		assert(!freed && !pres);	/* no double repopulation */
		assert(st == RECLAIMED || st == REPOPULATING);
		pres = 1
	}
}

/*
 * __stack_reclaim_switched_out(): PREPARE_RECLAIM -> RECLAIMABLE, and onto
 * the pending list (stack_pending_add()) if on no list. ok/olru: the
 * cmpxchg succeeded / the LRU state it replaced.
 */
inline switched_out(ok, olru)
{
#ifdef BUG_SWITCHOUT_STORE
	/* BUG: checked, then a plain store (atomic_set) */
	d_step { assert(!freed); ok = (st == PREPARE_RECLAIM); olru = lru };
	if
	:: ok -> d_step { st = RECLAIMABLE; lru = SWITCHED_LRU(olru) }
	:: else
	fi;
#else
	d_step {
		assert(!freed);
		ok = (st == PREPARE_RECLAIM);	/* else woken meanwhile (race 1) */
		olru = lru;
		if
		:: ok -> MOVE(RECLAIMABLE, SWITCHED_LRU(olru))	/* OLD: young again */
		:: else
		fi
	};
#endif
	if
	:: ok && olru == L_NOT_PRESENT -> pending_add()
	:: else
	fi;
	d_step { ok = 0; olru = 0 }
}

/* __block_task(): stack_reclaim_block() -> __stack_reclaim_block(), then on_rq = 0; rq lock held */
inline block_task(ok, olru)
{
	if
	:: block_key && pf && !exiting ->
		d_step {
			assert(!freed);
			assert(st == IN_USE);	/* WARN_ONCE "blocks in state" */
			olru = lru
		};
		/* single-shot stack_move(): fails if the LRU state moved meanwhile */
		d_step {
			if
			:: st == IN_USE && lru == olru -> MOVE(PREPARE_RECLAIM, lru); ok = 1
			:: else -> ok = 0
			fi;
			olru = 0
		};
		if
#ifdef BUG_BLOCK_IGNORES_ON_CPU
		:: ok -> switched_out(ok, olru)
#else
		:: ok && !on_cpu -> switched_out(ok, olru)	/* delayed dequeue: already switched out */
#endif
		:: else
		fi
	:: else
	fi;
	d_step { on_rq = 0; ok = 0 }
}

/*
 * try_to_wake_up(p, mask) for p != current. res: ttwu_state_match().
 * Contains stack_reclaim_wakeup() -> __stack_reclaim_wakeup() and
 * stack_repopulate_fast().
 */
inline ttwu(mask, res, ok, olru, deferred, done, c)
{
	/* raw_spin_lock_irqsave(&p->pi_lock); ttwu_state_match() */
	atomic { pi == 0 -> assert(!freed); pi = 1; res = ((tstate & (mask)) != 0) };
	if
	:: res ->
		if
		:: on_rq ->	/* ttwu_runnable(): p's rq lock, on_rq rechecked */
			atomic {
				rqlk[tcpu] == 0 ->
				if
				:: on_rq -> delayed = 0; tstate = T_RUNNING; done = 1
				:: else
				fi
			}
		:: else
		fi;
		if
		:: !done ->
			/* on_rq == 0: stack_reclaim_wakeup(p) -> __stack_reclaim_wakeup(p) */
			d_step {
				assert(!freed);
				ok = 0;
				if
				:: !wake_key || st == IN_USE -> skip
				:: else ->
					if
					:: st == PREPARE_RECLAIM || st == RECLAIMABLE ->
						MOVE(IN_USE, lru)	/* nothing freed yet */
					:: st == RECLAIMING ->
						MOVE(RECLAIMING_IN_USE, lru)	/* race 2 */
						deferred = 1
					:: st == RECLAIMED ->
						ok = 1; olru = lru	/* go on below */
					:: else ->
						assert(false)	/* WARN_ONCE "woken in state" */
					fi
				fi
			};
			if
			:: ok ->	/* RECLAIMED: stack_repopulate_fast() */
				if
				:: /* pool has the pages and memcg_kmem_charge_page_objcg(GFP_NOWAIT) ok */
					stack_install();
					/* single-shot stack_move(p, &old, IN_USE, ...) */
					d_step {
						assert(!freed && st == RECLAIMED && lru == olru);	/* WARN_ON_ONCE */
						MOVE(IN_USE, lru)
					}
				:: atomic {	/* pool empty or memcg charge failed */
					/* stack_move(REPOPULATING) loop; "only wakers move RECLAIMED" */
					assert(!freed && st == RECLAIMED);
					MOVE(REPOPULATING, lru);
					QUEUE_REPOPULATE;
					deferred = 1
				   }
				fi
			:: else
			fi;
#ifndef BUG_SRECL_AFTER_UNLOCK
			if
			:: deferred -> tstate = T_STACK_RECLAIM	/* before pi_lock is dropped */
			:: else
			fi;
#endif
			if
			:: deferred -> done = 1	/* stack_reclaim_wakeup() returned true */
			:: else ->
				atomic {
					tstate = T_WAKING;
					if
					:: on_cpu -> wl = 1; done = 1	/* ttwu_queue_wakelist() */
					:: true
					fi
				};
				if
				:: !done ->
					atomic {
						(on_cpu == 0);	/* smp_cond_load_acquire(&p->on_cpu, !VAL) */
						if	/* select_task_rq(), set_task_cpu() */
						:: c = 0
						:: c = 1
						fi
					};
					/* ttwu_queue() -> ttwu_do_activate(), under the new rq lock */
					atomic { rqlk[c] == 0 -> tcpu = c; on_rq = 1; tstate = T_RUNNING }
				:: else
				fi
			fi
		:: else
		fi
	:: else
	fi;
	d_step { pi = 0; ok = 0; olru = 0; done = 0; c = 0 };
#ifdef BUG_SRECL_AFTER_UNLOCK
	/* BUG: TASK_STACK_RECLAIM written after p->pi_lock was dropped */
	if
	:: deferred -> tstate = T_STACK_RECLAIM
	:: else
	fi;
#endif
	deferred = 0
}

/*
 * stack_drain_pending() for this CPU: cpumask_test_and_clear_cpu(), then
 * llist_del_all(), then stack_list_pending() for each task taken: onto
 * the list_lru as NEW, or left NOT_PRESENT if its memcg's list cannot be
 * allocated, then put_task_struct() of the pending entry's reference,
 * which may be the last one (p exited meanwhile) and then frees p.
 */
inline drain(got, last, ol)
{
	d_step { got = pbit; pbit = 0 };	/* cpumask_test_and_clear_cpu() */
	if
	:: got ->
		d_step {	/* llist_del_all(), llist_reverse_order() */
			got = (ll == LL_PENDING);
			if
			:: got -> assert(!freed); ll = LL_DRAIN
			:: else
			fi
		}
	:: else
	fi;
	if
	:: got ->
		/*
		 * stack_list_pending(p): llist_for_each_entry_safe() has read
		 * p's next entry, so its llist node is free from here on.
		 */
		if
		:: /* stack_lru_prepare() ok; stack_set_lru(NEW) */
			d_step { assert(!freed && ll == LL_DRAIN); ll = LL_NONE; lru = L_NEW };
			/* stack_lru_add_del(p, true) -> list_lru_add(): adds only an unlinked item */
			atomic { lrulock == 0 -> assert(!freed); if :: node == N_NONE -> node = N_LRU :: else fi }
		:: /* memcg_list_lru_alloc() failed: stack_set_lru(NOT_PRESENT), listed at the next block */
			d_step { assert(!freed && ll == LL_DRAIN); ll = LL_NONE; lru = L_NOT_PRESENT }
		fi;
#ifndef BUG_PENDING_NO_REF
		put_ref(last, ol);	/* put_task_struct() */
#endif
		got = 0
	:: else
	fi
}

/* ------------------------------------------------------------------ */

/* p: its wait loop, __schedule() and the CPU that runs it */
proctype Task()
{
	byte olru, r = 0, mycpu, ol;
	bool ok, last;

	do
	:: r < ROUNDS ->
		pf = 1;	/* reclaimable_stack guard around the wait */
wait:
		/* set_current_state(TASK_INTERRUPTIBLE); if (cond) break; */
		atomic {
			assert(running && pres);
			if
			:: cond -> cond = 0; goto woken
			:: else -> tstate = T_INTERRUPTIBLE
			fi
		};
		/* schedule() -> __schedule(): rq lock; woken before blocking? */
		atomic {
			rqlk[tcpu] == 0 -> rqlk[tcpu] = 1; mycpu = tcpu;
			if
			:: tstate == T_RUNNING -> rqlk[mycpu] = 0; mycpu = 0; goto wait
			:: else
			fi
		};
		/* try_to_block_task() -> dequeue_task(DEQUEUE_SLEEP) */
		if
		:: block_task(ok, olru)	/* dequeued now, on_cpu == 1 */
		:: delayed = 1		/* EEVDF delayed dequeue (sched_delayed) */
		fi;
		/* pick_next_task() may pick p's delayed entity and dequeue it */
		if
		:: delayed -> block_task(ok, olru); delayed = 0
		:: true
		fi;
		/* context_switch(): p's stack is left; CPU mycpu goes on in finish_task_switch() */
		d_step { fts == 0 -> running = 0; fts = 1; fcpu = mycpu; mycpu = 0 };
		/* off the CPU until picked */
		do
		:: atomic {	/* __schedule() on task_cpu(p) picks p */
			rqlk[tcpu] == 0 && on_rq && !delayed && !on_cpu ->
			assert(!freed && pres);	/* property (a): all pages present */
			assert(st == IN_USE);	/* and woken through the state machine */
			on_cpu = 1; running = 1
		   };
		   break
		:: atomic { rqlk[tcpu] == 0 && delayed && !on_cpu -> rqlk[tcpu] = 1; mycpu = tcpu };
		   /* pick of the delayed entity: dequeue_entities(DEQUEUE_DELAYED) -> __block_task() */
		   block_task(ok, olru);
		   d_step { delayed = 0; rqlk[mycpu] = 0; mycpu = 0 }
		:: atomic {	/* sched_ttwu_pending() on task_cpu(p) -> ttwu_do_activate() */
			rqlk[tcpu] == 0 && wl && !on_cpu ->
			wl = 0; on_rq = 1; tstate = T_RUNNING
		   }
		od;
		goto wait;
woken:
		pf = 0;	/* guard restores the flag */
		r++
	:: else -> break
	od;

	/* do_exit(): PF_EXITING; do_task_dead(): TASK_DEAD; the last __schedule() */
	atomic { assert(running && pres); exiting = 1; tstate = T_DEAD };
	atomic { rqlk[tcpu] == 0 -> rqlk[tcpu] = 1; mycpu = tcpu };
	block_task(ok, olru);
	d_step { fts == 0 -> running = 0; fts = 1; fcpu = mycpu; mycpu = 0 };
	/* finish_task_switch(): TASK_DEAD -> put_task_struct_rcu_user() -> call_rcu() */
	(fts == 0);
	(rcu == 0);	/* grace period */
	put_ref(last, ol)
}

/* finish_task_switch() with prev == p, on CPU fcpu, its rq lock held */
proctype Fts()
{
	byte olru;
	bool ok;

end:	do
	:: fts ->
#ifdef BUG_HOOK_AFTER_ON_CPU
		on_cpu = 0;	/* BUG: finish_task() before the hook */
#endif
		/* stack_reclaim_switched_out(prev): key, flag, state == PREPARE_RECLAIM */
		if
		:: block_key && pf && st == PREPARE_RECLAIM -> switched_out(ok, olru)
		:: else
		fi;
#ifdef BUG_HOOK_AFTER_ON_CPU
		d_step { rqlk[fcpu] = 0; fts = 0 }	/* finish_lock_switch() */
#else
		/* finish_task(): smp_store_release(&prev->on_cpu, 0); finish_lock_switch() */
		d_step { on_cpu = 0; rqlk[fcpu] = 0; fts = 0 }
#endif
	od
}

/* a waker: cond = 1; wake_up_process(p) */
proctype Waker()
{
	byte n = ROUNDS, olru, c, ol;
	bool ok, res, deferred, done, last;

	do
	:: n > 0 ->
		d_step { cond == 0 -> cond = 1; n-- };
		ttwu(TASK_NORMAL, res, ok, olru, deferred, done, c);
		res = 0
	:: else -> break
	od;
	put_ref(last, ol)
}

/* a second waker racing the first one and the worker */
proctype Racer()
{
	byte n = NRACE, olru, c, ol;
	bool ok, res, deferred, done, last;

	do
	:: n > 0 ->
		n--;
		ttwu(TASK_NORMAL, res, ok, olru, deferred, done, c);
		res = 0
	:: else -> break
	od;
	put_ref(last, ol)
}

/*
 * The shrinker (stack_count(), stack_scan() -> stack_reclaim_batch()), the
 * idle pass (stack_idle_work_fn() -> stack_idle_list() ->
 * stack_reclaim_batch(): the same drain and walk, another age bar, which
 * the nondeterministic rotate/reclaim/count-only choices cover) and the
 * drain work, which stays for as long as anything may kick it.
 */
proctype Shrinker()
{
	byte n = NSHRINK, ol;
	bool lazy, got, last;

end:	do
	:: drain_pending ->	/* stack_drain_work_fn() (stack_drain_dwork) */
		drain_pending = 0;
		drain(got, last, ol)
	:: n > 0 ->
		n--;
		if
		:: !sr_enabled	/* READ_ONCE(stack_reclaim_enabled): 0, SHRINK_STOP, return */
		:: sr_enabled ->
			drain(got, last, ol);	/* count: only if stack_pending_cpus is not empty */
			if
			:: true	/* count_objects only; or the walk stops at once (LRU_STOP) */
			:: true ->
				/*
				 * stack_reclaim_batch(): list_lru_shrink_walk_irq() ->
				 * stack_isolate(), lru lock, IRQs off
				 */
				atomic {
					lrulock == 0 ->
					if
					:: node == N_LRU ->
						assert(!freed);
						if
						/*
						 * Age is not modelled: a listed RECLAIMABLE
						 * task, NEW or OLD, may be too young for the
						 * pass (rotates) or old enough (reclaimed).
						 */
						:: st == RECLAIMABLE ->
							MOVE(RECLAIMABLE, L_OLD)	/* LRU_ROTATE */
						:: st == RECLAIMABLE ->
							MOVE(RECLAIMING, L_NOT_PRESENT);
							node = N_DISPOSE	/* list_lru_isolate_move() */
						:: else ->
							/*
							 * Leaves the list lazily. IRQs are off until
							 * the lock is dropped: an RCU reader, which
							 * holds off p's own last reference below.
							 */
							lazy = 1; lrulock = 1; rcu++
						fi
					:: else
					fi
				};
				if
				:: lazy ->	/* race 3: unlink, then publish NOT_PRESENT */
#ifdef BUG_SCAN_LRU_FIRST
					stack_set_lru(L_NOT_PRESENT);
					d_step { node = N_NONE; lrulock = 0; rcu--; lazy = 0 }
#else
					d_step { node = N_NONE };	/* list_lru_isolate() */
					/*
					 * Publish NOT_PRESENT, or, if p blocked again meanwhile
					 * (its switch-out saw NEW and queued it nowhere), PENDING
					 * and stack_pending_add() (race 5 in stack_isolate()).
					 * The add is a step of its own: p, RECLAIMABLE at the
					 * cmpxchg, may be woken and exit before it, but its own
					 * reference goes only after a grace period, and the
					 * walk is an RCU reader until after the add.
					 */
					d_step {
						assert(!freed);
						if
						:: st == RECLAIMABLE -> lru = L_PENDING
						:: else -> lru = L_NOT_PRESENT; lazy = 0
						fi
					};
					if
					:: lazy -> pending_add()
					:: else
					fi;
					d_step { lrulock = 0; rcu--; lazy = 0 }
#endif
				:: else
				fi;
				if
				:: node == N_DISPOSE ->
					/* stack_unmap_dead(), stack_flush_unmapped(), stack_free_page() */
					d_step { assert(!freed && pres && !running); pres = 0 };	/* (a), (c) */
					d_step {
						assert(!freed);
						node = N_NONE;	/* list_del_init(): off our list before p can run */
#ifdef BUG_SHRINK_NO_INUSE
						st = RECLAIMED; lru = L_NOT_PRESENT	/* BUG: atomic_set() */
#else
						if
						:: st == RECLAIMING -> MOVE(RECLAIMED, L_NOT_PRESENT)
						:: st == RECLAIMING_IN_USE ->	/* woken meanwhile (race 2) */
							MOVE(REPOPULATING, L_NOT_PRESENT);
							QUEUE_REPOPULATE
						:: else -> assert(false)	/* WARN_ONCE "while reclaiming" */
						fi
#endif
					}
				:: else
				fi
			fi
		fi
	od
}

/*
 * stack_repopulate_work() of p's node (rp->dwork; one node, one worker) and
 * stack_pool_refill(). With one task its urgent/normal sorting is moot.
 */
proctype Worker()
{
	byte olru, c;
	bool ok, res, deferred, done;

end:	do
	/* llist_del_all(), sorted before anything is mapped; stack_repopulate_one() */
	:: d_step {	/* old = atomic_read() */
		repop_pending -> repop_pending = 0; ok = inq; inq = 0;
		if :: ok -> assert(!freed); olru = lru :: else fi
	   };
		if
		:: ok ->
			if
			:: nfail > 0 ->	/* stack_repopulate_sleeping() failed: llist_add(), retry */
				d_step { nfail--; assert(!freed); LLIST_FREE; inq = 1; repop_pending = 1 }
			:: true ->
				stack_install();
				/* single-shot stack_move(p, &old, IN_USE, ...) */
				d_step {
					assert(!freed && st == REPOPULATING && lru == olru);	/* WARN_ON_ONCE */
					MOVE(IN_USE, lru)
				};
				/* wake_up_state(p, TASK_STACK_RECLAIM): an RCU reader, no reference */
				rcu++;
				ttwu(T_STACK_RECLAIM, res, ok, olru, deferred, done, c);
				d_step { rcu--; assert(res); res = 0 }	/* WARN_ON_ONCE */
			fi
		:: else
		fi;
		d_step { ok = 0; olru = 0 }
	od
}

/* vm.reclaimable_stacks: stack_reclaim_sysctl() -> stack_reclaim_set() */
proctype Sysctl()
{
	byte n = NTOGGLE;

	do
	:: n > 0 ->
		n--;
		if
		:: sr_enabled ->
			block_key = 0;	/* static_branch_disable() */
#ifdef BUG_WAKE_KEY_OFF
			wake_key = 0;	/* BUG */
#endif
			sr_enabled = 0
		:: else ->
			wake_key = 1;
			block_key = 1;
			sr_enabled = 1
		fi
	:: else -> break
	od
}

init
{
	atomic {
		run Task();
		run Fts();
		run Waker();
		run Racer();
		run Shrinker();
		run Worker();
		run Sysctl()
	};
	/*
	 * Property (e), once nothing can move: no pending entry was left
	 * without a drain to take it, and an exited p was freed. (A p stuck
	 * before its exit is an invalid end state, reported as such.)
	 */
	timeout ->
	d_step { assert(ll == LL_NONE); assert(freed || !exiting) }
}
