/* The hostile techniques: what an image that fights back does, one command
 * each, built into the multi-call test program (tests/guest/testprog.c) and
 * packed with it into the `hostile` sample image (tests/hostile/meson.build).
 *
 *   X (command, function, arches)
 *
 * as in guest/behaviours.h.  tests/hostile/test-hostile.c gates the
 * image once per technique and arch (`-- COMMAND` replaces its Cmd) and
 * checks what each must leave: a recorded attempt or a recorded denial, and
 * a `fail` verdict — never `pass`, never silence.
 *
 * Conventions, so a gate's report names the technique: every destination
 * is in TEST-NET-2 (198.51.100.N) or TEST-NET-3 (203.0.113.N), N the
 * technique's number below, port 7000 + N unless said; guest traffic never
 * leaves QEMU's restrict=on network anyway.  A technique whose evasion is
 * not itself egress ends with a "canary": one TCP connect to
 * 198.51.100.N:7000+N, which must be recorded — proof the evasion did not
 * blind the supervisor or the channel.  The program exits 0 when every
 * evasion failed as it should, 1 when one worked (a hole: the test fails on
 * the exit status even where the verdict would still fail). */
#ifndef HOSTILE_TECHNIQUES_H
#define HOSTILE_TECHNIQUES_H

#include "behaviours.h"

#define HOSTILE_TECHNIQUES(X)                                          \
  /* 1-3: egress the filter must see however it is spelled */          \
  X ("sendmmsg-many", sendmmsg_many, TESTPROG_BOTH)                    \
  X ("udp-connected-sendto", udp_connected_sendto, TESTPROG_BOTH)      \
  X ("syscall-numbers", syscall_numbers, TESTPROG_BOTH)                \
  /* 4-5: the sockaddr rewritten while the supervisor reads it */      \
  X ("toctou-thread", toctou_thread, TESTPROG_BOTH)                    \
  X ("toctou-shared", toctou_shared, TESTPROG_BOTH)                    \
  /* 6-13, 23-24: ways around the supervisor, out of the traced tree */ \
  X ("clone3", clone3_child, TESTPROG_BOTH)                            \
  X ("vm-writev", vm_writev, TESTPROG_BOTH)                            \
  X ("fork-storm", fork_storm, TESTPROG_BOTH)                          \
  X ("stop-storm", stop_storm, TESTPROG_BOTH)                          \
  X ("kill-supervisor", kill_supervisor, TESTPROG_BOTH)                \
  X ("setuid-exec", setuid_exec, TESTPROG_BOTH)                        \
  X ("daemon", daemon_outlives, TESTPROG_BOTH)                         \
  X ("late-child", late_child, TESTPROG_BOTH)                          \
  X ("proc-writes", proc_writes, TESTPROG_BOTH)                        \
  X ("stop-signal", stop_signal, TESTPROG_BOTH)                        \
  /* 14-16, 21-22: reaching the evidence */                            \
  X ("evidence-port", evidence_port, TESTPROG_BOTH)                    \
  X ("forge-frames", forge_frames, TESTPROG_BOTH)                      \
  X ("stdout-flood", stdout_flood, TESTPROG_BOTH)                      \
  X ("disk-write", disk_write, TESTPROG_BOTH)                          \
  X ("image-nodes", image_nodes, TESTPROG_BOTH)                        \
  /* 17-20: what the workload can see and reach */                     \
  X ("env-leak", env_leak, TESTPROG_BOTH)                              \
  X ("request-key", request_key, TESTPROG_BOTH)                        \
  X ("unix-outside", unix_outside, TESTPROG_BOTH)                      \
  X ("io-uring-sqpoll", io_uring_sqpoll, TESTPROG_BOTH)

#define DECLARE_TECHNIQUE(command, function, arches) int technique_##function (int argc, char **argv);
HOSTILE_TECHNIQUES (DECLARE_TECHNIQUE)
#undef DECLARE_TECHNIQUE

/* TCP connect to 198.51.100.@n:7000+@n, reported; the socket is closed. */
void hostile_canary (unsigned n);

/* "198.51.100.N" / "203.0.113.N" into @buf (16 bytes). */
const char *hostile_net2 (char *buf, unsigned n);
const char *hostile_net3 (char *buf, unsigned n);

#endif /* HOSTILE_TECHNIQUES_H */
