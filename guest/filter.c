/* The workload's seccomp filter.
 *
 * Why seccomp user notification and not SECCOMP_RET_TRACE with ptrace:
 *  - a notification stops only the calling thread, and only for the calls
 *    the filter selects; a tracer must also handle every signal-delivery and
 *    group stop of every thread it traces;
 *  - the filter is inherited by every child at fork/clone/vfork and kept
 *    across execve by the kernel, with no window: a tracer must catch each
 *    new task (PTRACE_O_TRACECLONE…), which CLONE_UNTRACED escapes;
 *  - the supervisor can perform a call itself with the bytes it recorded
 *    and return the result (EMULATE), which closes the time-of-check /
 *    time-of-use gap the kernel's seccomp.h warns about for CONTINUE: the
 *    destination reported is the destination used;
 *  - the workload may use ptrace itself in neither design (denied here).
 * Stacking is safe: the kernel refuses a second listener in a filter tree
 * (EBUSY) and this filter denies SECCOMP_FILTER_FLAG_NEW_LISTENER anyway, so
 * no filter the workload adds can answer our notifications; a workload
 * filter can only make a call fail (RET_ERRNO and stronger actions take
 * precedence over USER_NOTIF), never skip the notification and run it.
 *
 * Cost: system calls the filter does not select take a path that reads
 * only the architecture and the number and returns ALLOW, so the kernel's
 * per-syscall action cache (Linux >= 5.11) skips the filter for them
 * altogether.  clone and seccomp look at an argument and run the filter (a
 * few instructions) on each call.
 *
 * write/writev: when the kernel-hook recorder runs (hooks.h) it records a
 * write where it reaches a socket, and the filter lets every write through
 * on the fast path.  Without it (a kernel without BPF LSM) the filter
 * notifies write/writev on fds above 2, and the supervisor looks at each
 * to find the sockets: every write to a file then pays a notification. */
#define _GNU_SOURCE

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>

#include "filter.h"
#include "guest.h"

/* The foreign ABI the kernel also accepts, and its exit/exit_group numbers
 * (arch/x86/entry/syscalls/syscall_32.tbl, arch/arm/tools/syscall.tbl). */
#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#define COMPAT_AUDIT_ARCH AUDIT_ARCH_I386
#define COMPAT_NR_EXIT 1
#define COMPAT_NR_EXIT_GROUP 252
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#define COMPAT_AUDIT_ARCH AUDIT_ARCH_ARM
#define COMPAT_NR_EXIT 1
#define COMPAT_NR_EXIT_GROUP 248
#else
#error "airlock's supervisor supports x86_64 and aarch64 guests"
#endif

uint32_t
filter_native_arch (void)
{
  return NATIVE_AUDIT_ARCH;
}

/* Every native call the supervisor is notified of (connect, bind, listen,
 * accept, accept4, sendto and sendmsg only when the kernel-hook recorder
 * does not run: filter_build, hooked_call).  sendmmsg stays: the kernel asks the LSM about an entry
 * only when its destination differs from the previous entry's, so no
 * socket hook sees every entry (hooks.bpf.c). */
static const int notified_syscalls[] = {
  SYS_socket, SYS_socketpair, SYS_connect, SYS_bind, SYS_listen,
#ifdef SYS_accept
  SYS_accept,
#endif
  SYS_accept4, SYS_sendto, SYS_sendmsg, SYS_sendmmsg,
  /* Into a socket they send without a send call, and Linux 6.1 hands their
   * pages to ->sendpage, past the socket hook the kernel-hook recorder uses
   * (hooks.h): rare calls, looked at here. */
  SYS_sendfile, SYS_splice,
  SYS_execve, SYS_execveat,
  SYS_clone3, SYS_ptrace, SYS_process_vm_writev,
  SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register,
  SYS_keyctl, SYS_add_key, SYS_request_key, SYS_bpf,
  SYS_init_module, SYS_finit_module, SYS_delete_module, SYS_kexec_load,
#ifdef SYS_kexec_file_load
  SYS_kexec_file_load,
#endif
#ifdef SYS_iopl
  SYS_iopl,
#endif
#ifdef SYS_ioperm
  SYS_ioperm,
#endif
  SYS_perf_event_open, SYS_userfaultfd,
};

#define LD_ABS(field) BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, field))
/* The low 32 bits of argument @i: both guest arches are little-endian, and
 * the kernel reads every argument checked here as an int. */
#define LD_ARG_LO(i) BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, args[i]))
#define RET(v) BPF_STMT (BPF_RET | BPF_K, (v))

/* Jumps are relative and 8-bit: the program is assembled with symbolic
 * targets, resolved once its length is known. */
enum label { L_NONE, L_NOTIFY, L_ALLOW, L_CLONE, L_SECCOMP, L_FD, L_NATIVE };

struct asm_insn {
  struct sock_filter insn;
  enum label jt, jf;
};

static size_t
emit (struct asm_insn *prog, size_t n, struct sock_filter insn, enum label jt, enum label jf)
{
  prog[n].insn = insn;
  prog[n].jt = jt;
  prog[n].jf = jf;
  return n + 1;
}

/* The calls the kernel-hook recorder records at the socket's own hooks
 * (hooks.h), so the filter leaves them alone where it runs. */
static bool
hooked_call (int nr)
{
  return nr == SYS_connect || nr == SYS_bind || nr == SYS_listen || nr == SYS_accept4
#ifdef SYS_accept
         || nr == SYS_accept
#endif
         || nr == SYS_sendto || nr == SYS_sendmsg;
}

int
filter_build (struct sock_filter *out, size_t max, bool hooked, size_t *ret_len)
{
  struct asm_insn prog[128];
  size_t label_at[L_NATIVE + 1] = { 0 };
  size_t n = 0;

  /* Any other ABI (i386 int 0x80 on x86_64, AArch32 on arm64): every call
   * goes to the supervisor, which denies and reports it — except exit and
   * exit_group of the compat ABI, so a 32-bit program can still end. */
  n = emit (prog, n, (struct sock_filter) LD_ABS (arch), L_NONE, L_NONE);
  n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 0, 0),
            L_NATIVE, L_NONE);
  n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, COMPAT_AUDIT_ARCH, 0, 0),
            L_NONE, L_NOTIFY);
  n = emit (prog, n, (struct sock_filter) LD_ABS (nr), L_NONE, L_NONE);
  n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, COMPAT_NR_EXIT, 0, 0),
            L_ALLOW, L_NONE);
  n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, COMPAT_NR_EXIT_GROUP, 0, 0),
            L_ALLOW, L_NOTIFY);

  label_at[L_NATIVE] = n;
  n = emit (prog, n, (struct sock_filter) LD_ABS (nr), L_NONE, L_NONE);
#ifdef __x86_64__
  /* x32 shares AUDIT_ARCH_X86_64 and sets bit 30 of the number. */
  n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT, 0, 0),
            L_NOTIFY, L_NONE);
#endif
  for (size_t i = 0; i < sizeof notified_syscalls / sizeof notified_syscalls[0]; i++)
    if (!hooked || !hooked_call (notified_syscalls[i]))
      n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K,
                                                      (uint32_t) notified_syscalls[i], 0, 0),
              L_NOTIFY, L_NONE);
  n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 0),
            L_CLONE, L_NONE);
  n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 0, 0),
            L_SECCOMP, L_NONE);
  if (!hooked)
    {
      n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 0, 0),
                L_FD, L_NONE);
      n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_writev, 0, 0),
                L_FD, L_NONE);
    }
  n = emit (prog, n, (struct sock_filter) RET (SECCOMP_RET_ALLOW), L_NONE, L_NONE);

  /* clone: flags are the first argument on both arches. */
  label_at[L_CLONE] = n;
  n = emit (prog, n, (struct sock_filter) LD_ARG_LO (0), L_NONE, L_NONE);
  n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K, CLONE_UNTRACED, 0, 0),
            L_NOTIFY, L_ALLOW);

  /* seccomp(SECCOMP_SET_MODE_FILTER, flags, …) with NEW_LISTENER. */
  label_at[L_SECCOMP] = n;
  n = emit (prog, n, (struct sock_filter) LD_ARG_LO (0), L_NONE, L_NONE);
  n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_SET_MODE_FILTER, 0, 0),
            L_NONE, L_ALLOW);
  n = emit (prog, n, (struct sock_filter) LD_ARG_LO (1), L_NONE, L_NONE);
  n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K,
                                                    SECCOMP_FILTER_FLAG_NEW_LISTENER, 0, 0),
            L_NOTIFY, L_ALLOW);

  /* write/writev: only fds above stderr can be sockets worth a look (a
   * socket dup'ed onto 0-2 was recorded when it connected). */
  label_at[L_FD] = n;
  n = emit (prog, n, (struct sock_filter) LD_ARG_LO (0), L_NONE, L_NONE);
  n = emit (prog, n, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JGT | BPF_K, 2, 0, 0),
            L_NOTIFY, L_ALLOW);

  /* BPF only jumps forward: the shared answers come last. */
  label_at[L_ALLOW] = n;
  n = emit (prog, n, (struct sock_filter) RET (SECCOMP_RET_ALLOW), L_NONE, L_NONE);
  label_at[L_NOTIFY] = n;
  n = emit (prog, n, (struct sock_filter) RET (SECCOMP_RET_USER_NOTIF), L_NONE, L_NONE);

  if (n > max)
    return -E2BIG;
  for (size_t i = 0; i < n; i++)
    {
      out[i] = prog[i].insn;
      if (prog[i].jt != L_NONE)
        {
          size_t off = label_at[prog[i].jt] - (i + 1);
          if (off > 255)
            return -ERANGE;
          out[i].jt = (uint8_t) off;
        }
      if (prog[i].jf != L_NONE)
        {
          size_t off = label_at[prog[i].jf] - (i + 1);
          if (off > 255)
            return -ERANGE;
          out[i].jf = (uint8_t) off;
        }
    }
  *ret_len = n;
  return 0;
}
