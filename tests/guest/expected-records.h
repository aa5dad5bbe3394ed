/* The records each test program must produce under the supervisor, as
 * exact multisets of key lines (airlock_event_key_line(), lib/evidence/
 * event.h): "SYSCALL ACTION KEY[ dns=NAME]...", one line per SYSCALL event,
 * in any order, each as many times as it must occur ("N*LINE": N times) —
 * nothing more, nothing less.  tests/vm/test-supervisor.c runs every behaviour on every arch it
 * exists on and compares.
 *
 * What is recorded (guest/filter.c, guest/calls.c, guest/hooks.bpf.c):
 * socket, socketpair, connect, bind, listen, accept/accept4, sendto,
 * sendmsg, sendmmsg (one record per entry), write/writev on sockets,
 * execve/execveat, and every denial.  connect, bind, listen, accept,
 * accept4, sendto, sendmsg and writes on sockets are recorded at the kernel's socket hooks, on the kernel's
 * copy of the destination, and continue: the kernel makes the call with
 * the bytes recorded (a call refused before it reaches a socket is not
 * recorded: it cannot reach the network).  sendmmsg is the supervisor's
 * (no socket hook sees every entry: guest/hooks.bpf.c): one record per
 * entry, emulated when an entry names an inet destination.  The key is the
 * destination (the address passed, or the
 * connected peer when the call names none), "FAMILY/TYPE/PROTO -" for a
 * socket without one, "-" without a socket.
 *
 * What the programs' libc adds, so it is expected too:
 *   - every run starts with the entrypoint's execve ("execve continue -");
 *   - glibc's pthread_create tries clone3 first on amd64, which is denied
 *     (its flags live in memory the filter cannot read), then falls back to
 *     clone; Debian 12's aarch64 glibc (2.36) has no clone3 wrapper.  A line
 *     "ARCH:line" is expected on that arch only;
 *   - send() is the sendto system call with no address, on both arches;
 *   - fork() is clone without CLONE_UNTRACED and vfork() is vfork (amd64)
 *     or clone (arm64): neither is recorded.
 *
 * Choices these lines rest on (check here first when a line disagrees):
 *   - a socket() call is keyed by its arguments even when denied, and so is
 *     a foreign-ABI socket() (same argument order on i386, x32 and arm);
 *     a foreign-ABI connect carries no socket the host can name ("-");
 *   - for a TCP stream, the dns= name is on the write that completes the
 *     message (here the second of the two writes).
 *
 * Plain C data, no GLib, so it can sit beside the programs it describes. */
#ifndef TESTPROG_EXPECTED_RECORDS_H
#define TESTPROG_EXPECTED_RECORDS_H

#include "behaviours.h"

#include <stddef.h>

typedef struct {
  const char *command;
  unsigned arches;              /* TESTPROG_AMD64 | TESTPROG_ARM64 */
  const char *const *records;   /* NULL-terminated multiset of key lines */
  int clock_warp;               /* run under the warped clock (AirlockVmOptions.clock_warp):
                                 * the behaviour sleeps longer than a run on the real one */
  const char *apart;            /* key lines that start with this are not listed: their
                                 * values vary from run to run, and the test checks them
                                 * against what the program printed */
  unsigned vcpus;               /* the guest's CPUs (0: one) */
} TestprogExpectation;

#define EXEC_ENTRY "execve continue -"
#define RECORDS(...) ((const char *const[]) { EXEC_ENTRY, __VA_ARGS__, NULL })
#define ONLY_EXEC ((const char *const[]) { EXEC_ENTRY, NULL })

static const TestprogExpectation testprog_expectations[] = {
  { "connect-tcp4", TESTPROG_BOTH, RECORDS (
      "socket continue inet/stream/tcp -",
      "connect continue inet/stream/tcp 192.0.2.1:9") },
  { "connect-udp4", TESTPROG_BOTH, RECORDS (
      "socket continue inet/dgram/udp -",
      "connect continue inet/dgram/udp 192.0.2.1:9") },
  { "connect-tcp6", TESTPROG_BOTH, RECORDS (
      "socket continue inet6/stream/tcp -",
      "connect continue inet6/stream/tcp [2001:db8::1]:9") },
  { "connect-udp6", TESTPROG_BOTH, RECORDS (
      "socket continue inet6/dgram/udp -",
      "connect continue inet6/dgram/udp [2001:db8::1]:9") },
  { "connect-ll6", TESTPROG_BOTH, RECORDS (
      "socket continue inet6/stream/tcp -",
      "connect continue inet6/stream/tcp [fe80::1%1]:9") },
  /* The key keeps the IPv6 form; the v4-mapped note is for people. */
  { "connect-v4mapped", TESTPROG_BOTH, RECORDS (
      "socket continue inet6/stream/tcp -",
      "connect continue inet6/stream/tcp [::ffff:192.0.2.1]:9") },
  { "sendto-udp4", TESTPROG_BOTH, RECORDS (
      "socket continue inet/dgram/udp -",
      "sendto continue inet/dgram/udp 192.0.2.1:9") },
  /* write() and send() name no address: the key is the connected peer. */
  { "udp-connected-write", TESTPROG_BOTH, RECORDS (
      "socket continue inet/dgram/udp -",
      "connect continue inet/dgram/udp 127.0.0.1:9",
      "write continue inet/dgram/udp 127.0.0.1:9",
      "sendto continue inet/dgram/udp 127.0.0.1:9") },
  /* Writes that no send call makes: on fd 0 and by pwritev2 the kernel-hook
   * recorder sees them (guest/hooks.h: its LSM hook on amd64, its kprobe
   * on arm64, whose Debian 12 kernel cannot attach LSM programs); sendfile
   * and splice are notified (guest/filter.c). */
  { "socket-writes-hooked", TESTPROG_BOTH, RECORDS (
      "socket continue inet/dgram/udp -",
      "connect continue inet/dgram/udp 127.0.0.1:9",
      "write continue inet/dgram/udp 127.0.0.1:9",
      "pwritev2 continue inet/dgram/udp 127.0.0.1:9",
      "sendfile continue inet/dgram/udp 127.0.0.1:9",
      "splice continue inet/dgram/udp 127.0.0.1:9") },
  { "sendmsg-udp4", TESTPROG_BOTH, RECORDS (
      "socket continue inet/dgram/udp -",
      "sendmsg continue inet/dgram/udp 192.0.2.1:9") },
  { "sendmmsg3", TESTPROG_BOTH, RECORDS (
      "socket continue inet/dgram/udp -",
      "sendmmsg emulate inet/dgram/udp 192.0.2.1:9",
      "sendmmsg emulate inet/dgram/udp 192.0.2.2:9",
      "sendmmsg emulate inet/dgram/udp 192.0.2.2:10") },
  { "sendmmsg1000", TESTPROG_BOTH, RECORDS (
      "socket continue inet/dgram/udp -",
      "1000*sendmmsg emulate inet/dgram/udp 127.0.0.1:9") },
  { "fastopen", TESTPROG_BOTH, RECORDS (
      "socket continue inet/stream/tcp -",
      "sendto continue inet/stream/tcp 192.0.2.1:80") },
  { "dns-udp", TESTPROG_BOTH, RECORDS (
      "socket continue inet/dgram/udp -",
      "sendto continue inet/dgram/udp 192.0.2.53:53 dns=example.com.") },
  { "dns-udp-write", TESTPROG_BOTH, RECORDS (
      "socket continue inet/dgram/udp -",
      "connect continue inet/dgram/udp 127.0.0.1:53",
      "write continue inet/dgram/udp 127.0.0.1:53 dns=example.net.") },
  { "dns-tcp", TESTPROG_BOTH, RECORDS (
      "socket continue inet/stream/tcp -",
      "bind continue inet/stream/tcp 127.0.0.1:53",
      "listen continue inet/stream/tcp -",
      "socket continue inet/stream/tcp -",
      "connect continue inet/stream/tcp 127.0.0.1:53",
      "accept4 continue inet/stream/tcp -",
      "write continue inet/stream/tcp 127.0.0.1:53",
      "write continue inet/stream/tcp 127.0.0.1:53 dns=example.org.") },
  { "unix-path", TESTPROG_BOTH, RECORDS (
      "socket continue unix/stream/0 -",
      "bind continue unix/stream/0 unix:/tmp/testprog.sock",
      "listen continue unix/stream/0 -",
      "socket continue unix/stream/0 -",
      "connect continue unix/stream/0 unix:/tmp/testprog.sock") },
  { "unix-abstract", TESTPROG_BOTH, RECORDS (
      "socket continue unix/stream/0 -",
      "bind continue unix/stream/0 unix:@airlock-testprog",
      "listen continue unix/stream/0 -",
      "socket continue unix/stream/0 -",
      "connect continue unix/stream/0 unix:@airlock-testprog") },
  /* 24 binds to 0.0.0.0 while a thread flips the port between 7401 and
   * 7402: each bind's recorded port must be the port it got, which the
   * program prints (test-supervisor.c, check_bind_flip).  Two CPUs: the
   * flipper runs while the bind is made, not only when the binding
   * thread sleeps. */
  { "bind-flip", TESTPROG_BOTH, RECORDS (
      "amd64:clone3 deny:clone3 -",
      "24*socket continue inet/dgram/udp -"), .apart = "bind ", .vcpus = 2 },
  /* Every call that reaches the supervisor or a socket's hook is
   * recorded, however bad its arguments, and the good send at the end too:
   * one record the host rejected would have lost it.  No socket: "-".  An
   * inet socket whose call names an address that is absent (unreadable, a
   * length the kernel refuses before reading) keys as the bare socket;
   * bytes that do not decode as the socket's address (too short, unknown
   * family) as "?".  connect, bind, listen, accept4, sendto and sendmsg are
   * the kernel-hook recorder's: only the calls whose address and message the kernel copied
   * reach the socket's hook (a bad descriptor, a non-socket, an unreadable
   * address, msghdr or iovec array, a refused length fail before it, and
   * cannot reach the network); a send with unreadable data reaches it (the
   * protocol reads the data later).  sendmmsg is notified: with a usable
   * length on a UDP socket it is emulated, the rest continue. */
  { "bad-args", TESTPROG_BOTH, RECORDS (
      "socket continue inet/dgram/udp -",
      "connect continue inet/dgram/udp ?",
      "connect continue inet/dgram/udp ?",
      "sendto continue inet/dgram/udp 127.0.0.1:9",
      "sendto continue inet/dgram/udp ?",
      "sendto continue inet/dgram/udp ?",
      "sendmsg continue inet/dgram/udp ?",
      "sendmsg continue inet/dgram/udp ?",
      "sendmmsg continue -",
      "sendmmsg continue -",
      "sendmmsg continue -",
      "sendmmsg emulate inet/dgram/udp -",
      "sendmmsg continue inet/dgram/udp -",
      "sendmmsg emulate inet/dgram/udp 127.0.0.1:9",
      "sendmmsg emulate inet/dgram/udp -",
      "socketpair continue unix/stream/0 -",
      "execve continue -",
      "execve continue -",
      "sendto continue inet/dgram/udp 127.0.0.1:9") },
  /* sixteen children: a connect to 11xx, then at once an exec of
   * testprog-exec, which connects to 1199.  Who made each is checked apart
   * (test-supervisor.c, check_connect_exec). */
  { "connect-exec", TESTPROG_BOTH, RECORDS (
      "16*execve continue -",
      "32*socket continue inet/stream/tcp -",
      "connect continue inet/stream/tcp 192.0.2.1:1100",
      "connect continue inet/stream/tcp 192.0.2.1:1101",
      "connect continue inet/stream/tcp 192.0.2.1:1102",
      "connect continue inet/stream/tcp 192.0.2.1:1103",
      "connect continue inet/stream/tcp 192.0.2.1:1104",
      "connect continue inet/stream/tcp 192.0.2.1:1105",
      "connect continue inet/stream/tcp 192.0.2.1:1106",
      "connect continue inet/stream/tcp 192.0.2.1:1107",
      "connect continue inet/stream/tcp 192.0.2.1:1108",
      "connect continue inet/stream/tcp 192.0.2.1:1109",
      "connect continue inet/stream/tcp 192.0.2.1:1110",
      "connect continue inet/stream/tcp 192.0.2.1:1111",
      "connect continue inet/stream/tcp 192.0.2.1:1112",
      "connect continue inet/stream/tcp 192.0.2.1:1113",
      "connect continue inet/stream/tcp 192.0.2.1:1114",
      "connect continue inet/stream/tcp 192.0.2.1:1115",
      "16*connect continue inet/stream/tcp 192.0.2.1:1199"), .vcpus = 2 },
  /* fork, vfork, thread, exec'd testprog-exec, daemon: ports 1001-1005.
   * Who made each is checked apart (test-supervisor.c). */
  { "tree", TESTPROG_BOTH, RECORDS (
      "amd64:clone3 deny:clone3 -",
      "execve continue -",
      "socket continue inet/stream/tcp -",
      "socket continue inet/stream/tcp -",
      "socket continue inet/stream/tcp -",
      "socket continue inet/stream/tcp -",
      "socket continue inet/stream/tcp -",
      "connect continue inet/stream/tcp 192.0.2.1:1001",
      "connect continue inet/stream/tcp 192.0.2.1:1002",
      "connect continue inet/stream/tcp 192.0.2.1:1003",
      "connect continue inet/stream/tcp 192.0.2.1:1004",
      "connect continue inet/stream/tcp 192.0.2.1:1005") },

  /* Denied: each call fails in the workload and leaves one record. */
  { "i386-int80", TESTPROG_AMD64, RECORDS (
      "i386:socketcall deny:foreign-abi -",
      "i386:socket deny:foreign-abi inet/stream/tcp -",
      "i386:connect deny:foreign-abi -") },
  { "x32", TESTPROG_AMD64, RECORDS (
      "x32:socket deny:x32 inet/stream/tcp -",
      "x32:connect deny:x32 -") },
  /* testprog forks and execs the AArch32 binary; its socket and connect
   * are its only recorded calls (its exit_group is allowed, unrecorded). */
  { "aarch32", TESTPROG_ARM64, RECORDS (
      "execve continue -",
      "arm:socket deny:foreign-abi inet/stream/tcp -",
      "arm:connect deny:foreign-abi -") },
  { "io-uring", TESTPROG_BOTH, RECORDS (
      "io_uring_setup deny:io-uring -",
      "io_uring_enter deny:io-uring -",
      "io_uring_register deny:io-uring -") },
  { "raw-socket", TESTPROG_BOTH, RECORDS (
      "socket deny:raw-socket inet/raw/icmp -") },
  /* htons (ETH_P_ALL) as the protocol argument: 0x0300. */
  { "packet-socket", TESTPROG_BOTH, RECORDS (
      "socket deny:packet-socket packet/raw/768 -") },
  { "vsock", TESTPROG_BOTH, RECORDS (
      "socket deny:vsock vsock/stream/0 -") },
  { "sctp", TESTPROG_BOTH, RECORDS (
      "socket deny:sctp inet/stream/sctp -") },
  { "ptrace", TESTPROG_BOTH, RECORDS (
      "ptrace deny:ptrace -",
      "ptrace deny:ptrace -") },
  { "seccomp-listener", TESTPROG_BOTH, RECORDS (
      "seccomp deny:seccomp-listener -") },
  { "clone-untraced", TESTPROG_BOTH, RECORDS (
      "clone deny:clone-untraced -") },

  { "env", TESTPROG_BOTH, ONLY_EXEC },
  { "noop", TESTPROG_BOTH, ONLY_EXEC },

  /* bench/supervisor's workloads, run here bare (their short default
   * loops, tests/guest/bench.c).  getpid/stat/read and write(2) on a file
   * are not recorded; bench-connect connects 3 times, bench-sendto sends 3
   * datagrams. */
  { "bench-syscalls", TESTPROG_BOTH, ONLY_EXEC },
  { "bench-connect", TESTPROG_BOTH, RECORDS (
      "socket continue inet/dgram/udp -",
      "connect continue inet/dgram/udp 192.0.2.1:9",
      "connect continue inet/dgram/udp 192.0.2.1:9",
      "connect continue inet/dgram/udp 192.0.2.1:9") },
  { "bench-sendto", TESTPROG_BOTH, RECORDS (
      "socket continue inet/dgram/udp -",
      "3*sendto continue inet/dgram/udp 127.0.0.1:9") },
  { "bench-write", TESTPROG_BOTH, ONLY_EXEC },
  /* Under the supervisor too, its children's filters select nothing the
   * loop calls, and fork is clone without CLONE_UNTRACED. */
  { "bench-filter", TESTPROG_BOTH, ONLY_EXEC },
  /* bench/clock's: ten rounds of arithmetic, no system call recorded. */
  { "bench-cpu", TESTPROG_BOTH, ONLY_EXEC },

  /* An hour's sleep, then the calls: run under the warped clock, which
   * passes the hour while the guest idles (clock_warp below). */
  { "time-bomb", TESTPROG_BOTH, RECORDS (
      "socket continue inet/dgram/udp -",
      "sendto continue inet/dgram/udp 192.0.2.1:80",
      "socket continue inet/stream/tcp -",
      "connect continue inet/stream/tcp 192.0.2.1:80"), 1 },
};

#undef RECORDS
#undef ONLY_EXEC

#endif /* TESTPROG_EXPECTED_RECORDS_H */
