/* The behaviours of the multi-call test program, one line each:
 *
 *   X (command, function, arches)
 *
 * command is what a user types (`airlock run --guest-program connect-tcp4`)
 * and the name of the testroot's /bin symlink to testprog; arches is a mask
 * of TESTPROG_AMD64 / TESTPROG_ARM64 (the arches the behaviour exists on).
 *
 * These lists are read by tests/guest/testprog.c (its dispatch table) and
 * by lib/guestimg/testroot.c (the symlinks it puts in the testroot), so the
 * two cannot disagree.  Plain C, no GLib: both sides include it.  It lives
 * in guest/, the headers shared by the host library and the guest's
 * programs (both have guest/ on their include path), not in tests/: the
 * library the testroot is built by must not reach into the tests.
 *
 * TESTPROG_BEHAVIOURS: each produces exact records whatever the network
 * does (tests/guest/expected-records.h; tests/vm/test-supervisor.c runs
 * every one).  TESTPROG_NET_BEHAVIOURS: clients that talk to whatever
 * answers the VM's network, one per protocol (net.c): what they record
 * depends on the answers, so their checks are the sinkhole's VM tests
 * (tests/vm/sinkhole.sh), not exact records. */
#ifndef TESTPROG_BEHAVIOURS_H
#define TESTPROG_BEHAVIOURS_H

#define TESTPROG_AMD64 1u
#define TESTPROG_ARM64 2u
#define TESTPROG_BOTH (TESTPROG_AMD64 | TESTPROG_ARM64)

#define TESTPROG_BEHAVIOURS(X)                                  \
  X ("connect-tcp4", connect_tcp4, TESTPROG_BOTH)               \
  X ("connect-udp4", connect_udp4, TESTPROG_BOTH)               \
  X ("connect-tcp6", connect_tcp6, TESTPROG_BOTH)               \
  X ("connect-udp6", connect_udp6, TESTPROG_BOTH)               \
  X ("connect-ll6", connect_ll6, TESTPROG_BOTH)                 \
  X ("connect-v4mapped", connect_v4mapped, TESTPROG_BOTH)       \
  X ("sendto-udp4", sendto_udp4, TESTPROG_BOTH)                 \
  X ("udp-connected-write", udp_connected_write, TESTPROG_BOTH) \
  X ("socket-writes-hooked", socket_writes_hooked, TESTPROG_BOTH) \
  X ("sendmsg-udp4", sendmsg_udp4, TESTPROG_BOTH)               \
  X ("sendmmsg3", sendmmsg3, TESTPROG_BOTH)                     \
  X ("sendmmsg1000", sendmmsg1000, TESTPROG_BOTH)               \
  X ("fastopen", fastopen, TESTPROG_BOTH)                       \
  X ("dns-udp", dns_udp, TESTPROG_BOTH)                         \
  X ("dns-tcp", dns_tcp, TESTPROG_BOTH)                         \
  X ("dns-udp-write", dns_udp_write, TESTPROG_BOTH)             \
  X ("unix-path", unix_path, TESTPROG_BOTH)                     \
  X ("unix-abstract", unix_abstract, TESTPROG_BOTH)             \
  X ("bind-flip", bind_flip, TESTPROG_BOTH)                     \
  X ("tree", tree, TESTPROG_BOTH)                               \
  X ("connect-exec", connect_exec, TESTPROG_BOTH)               \
  X ("bad-args", bad_args, TESTPROG_BOTH)                       \
  X ("i386-int80", i386_int80, TESTPROG_AMD64)                  \
  X ("x32", x32, TESTPROG_AMD64)                                \
  X ("aarch32", aarch32, TESTPROG_ARM64)                        \
  X ("io-uring", io_uring, TESTPROG_BOTH)                       \
  X ("raw-socket", raw_socket, TESTPROG_BOTH)                   \
  X ("packet-socket", packet_socket, TESTPROG_BOTH)             \
  X ("vsock", vsock, TESTPROG_BOTH)                             \
  X ("sctp", sctp, TESTPROG_BOTH)                               \
  X ("ptrace", ptrace_denied, TESTPROG_BOTH)                    \
  X ("seccomp-listener", seccomp_listener, TESTPROG_BOTH)       \
  X ("clone-untraced", clone_untraced, TESTPROG_BOTH)           \
  X ("env", env, TESTPROG_BOTH)                                 \
  X ("noop", noop, TESTPROG_BOTH)                               \
  X ("bench-syscalls", bench_syscalls, TESTPROG_BOTH)           \
  X ("bench-connect", bench_connect, TESTPROG_BOTH)             \
  X ("bench-sendto", bench_sendto, TESTPROG_BOTH)               \
  X ("bench-write", bench_write, TESTPROG_BOTH)               \
  X ("bench-filter", bench_filter, TESTPROG_BOTH)               \
  X ("bench-cpu", bench_cpu, TESTPROG_BOTH)                     \
  X ("time-bomb", time_bomb, TESTPROG_BOTH)

#define TESTPROG_NET_BEHAVIOURS(X)                              \
  X ("net-http", net_http, TESTPROG_BOTH)                       \
  X ("net-tls", net_tls, TESTPROG_BOTH)                         \
  X ("net-dns-tcp", net_dns_tcp, TESTPROG_BOTH)                 \
  X ("net-raw", net_raw, TESTPROG_BOTH)                         \
  X ("net-udp", net_udp, TESTPROG_BOTH)                         \
  X ("net-ssh", net_ssh, TESTPROG_BOTH)

#endif /* TESTPROG_BEHAVIOURS_H */
