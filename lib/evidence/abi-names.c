/* The Linux ABI's numbers that the supervisor's records carry, named
 * (abi-names.h): system calls per ABI, errnos, signals and wait statuses.
 * Tables only, kept apart from the decoder (event.c) so that a new call or
 * ABI is one row here and the decoder's logic stays readable. */
#include "config.h"

#include "abi-names.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

/* include/uapi/linux/audit.h: EM_* | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE. */
#define AUDIT_ARCH_X86_64_ 0xc000003eu
#define AUDIT_ARCH_I386_ 0x40000003u
#define AUDIT_ARCH_AARCH64_ 0xc00000b7u
#define AUDIT_ARCH_ARM_ 0x40000028u
/* arch/x86/include/uapi/asm/unistd.h: x32 calls carry this bit. */
#define X32_SYSCALL_BIT 0x40000000u

/* ---- system call names ----
 *
 * Every call the supervisor traces or denies, per ABI, from the kernel's
 * tables (arch/x86/entry/syscalls/syscall_{64,32}.tbl, the asm-generic
 * table arm64 uses, arch/arm/tools/syscall.tbl).  x32 has its own table:
 * its numbers for calls with compat arguments start at 512, and the
 * 64-bit-only numbers are not x32 calls at all. */

typedef struct {
  guint32 nr;
  const char *name;
} SyscallName;

#define COMMON_INET(socket_, socketpair_, connect_, bind_, listen_, accept4_, sendto_, \
                    sendmsg_, sendmmsg_)                                                \
  { socket_, "socket" }, { socketpair_, "socketpair" }, { connect_, "connect" },        \
  { bind_, "bind" }, { listen_, "listen" }, { accept4_, "accept4" },                   \
  { sendto_, "sendto" }, { sendmsg_, "sendmsg" }, { sendmmsg_, "sendmmsg" }

static const SyscallName names_x86_64[] = {
  COMMON_INET (41, 53, 42, 49, 50, 288, 44, 46, 307),
  { 43, "accept" }, { 1, "write" }, { 20, "writev" }, { 59, "execve" }, { 322, "execveat" },
  { 56, "clone" }, { 435, "clone3" }, { 101, "ptrace" }, { 311, "process_vm_writev" },
  { 425, "io_uring_setup" }, { 426, "io_uring_enter" }, { 427, "io_uring_register" },
  { 250, "keyctl" }, { 248, "add_key" }, { 249, "request_key" }, { 321, "bpf" },
  { 317, "seccomp" }, { 175, "init_module" }, { 313, "finit_module" }, { 246, "kexec_load" },
  { 320, "kexec_file_load" }, { 172, "iopl" }, { 173, "ioperm" }, { 298, "perf_event_open" },
  { 323, "userfaultfd" }, { 45, "recvfrom" }, { 0, "read" }, { 3, "close" }, { 57, "fork" },
  { 58, "vfork" }, { 60, "exit" }, { 231, "exit_group" },
  /* Sends the kernel-hook recorder sees (guest/hooks.h). */
  { 296, "pwritev" }, { 328, "pwritev2" }, { 40, "sendfile" }, { 275, "splice" },
};

static const SyscallName names_x32[] = {
  COMMON_INET (41, 53, 42, 49, 50, 288, 44, 518, 538),
  { 43, "accept" }, { 1, "write" }, { 516, "writev" }, { 520, "execve" }, { 545, "execveat" },
  { 56, "clone" }, { 435, "clone3" }, { 521, "ptrace" }, { 540, "process_vm_writev" },
  { 425, "io_uring_setup" }, { 426, "io_uring_enter" }, { 427, "io_uring_register" },
  { 250, "keyctl" }, { 248, "add_key" }, { 249, "request_key" }, { 321, "bpf" },
  { 317, "seccomp" }, { 175, "init_module" }, { 313, "finit_module" }, { 528, "kexec_load" },
  { 320, "kexec_file_load" }, { 172, "iopl" }, { 173, "ioperm" }, { 298, "perf_event_open" },
  { 323, "userfaultfd" }, { 517, "recvfrom" }, { 0, "read" }, { 3, "close" },
};

static const SyscallName names_i386[] = {
  COMMON_INET (359, 360, 362, 361, 363, 364, 369, 370, 345),
  { 102, "socketcall" }, { 4, "write" }, { 146, "writev" }, { 11, "execve" },
  { 358, "execveat" }, { 120, "clone" }, { 435, "clone3" }, { 26, "ptrace" },
  { 348, "process_vm_writev" }, { 425, "io_uring_setup" }, { 426, "io_uring_enter" },
  { 427, "io_uring_register" }, { 288, "keyctl" }, { 286, "add_key" }, { 287, "request_key" },
  { 357, "bpf" }, { 354, "seccomp" }, { 128, "init_module" }, { 350, "finit_module" },
  { 283, "kexec_load" }, { 110, "iopl" }, { 101, "ioperm" }, { 336, "perf_event_open" },
  { 374, "userfaultfd" }, { 371, "recvfrom" }, { 3, "read" }, { 6, "close" }, { 1, "exit" },
  { 252, "exit_group" },
};

static const SyscallName names_aarch64[] = {
  COMMON_INET (198, 199, 203, 200, 201, 242, 206, 211, 269),
  { 202, "accept" }, { 64, "write" }, { 66, "writev" }, { 221, "execve" }, { 281, "execveat" },
  { 220, "clone" }, { 435, "clone3" }, { 117, "ptrace" }, { 271, "process_vm_writev" },
  { 425, "io_uring_setup" }, { 426, "io_uring_enter" }, { 427, "io_uring_register" },
  { 219, "keyctl" }, { 217, "add_key" }, { 218, "request_key" }, { 280, "bpf" },
  { 277, "seccomp" }, { 105, "init_module" }, { 273, "finit_module" }, { 104, "kexec_load" },
  { 294, "kexec_file_load" }, { 241, "perf_event_open" }, { 282, "userfaultfd" },
  { 70, "pwritev" }, { 287, "pwritev2" }, { 71, "sendfile" }, { 76, "splice" },
  { 207, "recvfrom" }, { 63, "read" }, { 57, "close" }, { 93, "exit" }, { 94, "exit_group" },
};

/* EABI numbers (an AArch32 process on arm64 uses these). */
static const SyscallName names_arm[] = {
  COMMON_INET (281, 288, 283, 282, 284, 366, 290, 296, 374),
  { 285, "accept" }, { 289, "send" }, { 102, "socketcall" }, { 4, "write" }, { 146, "writev" },
  { 11, "execve" }, { 387, "execveat" }, { 120, "clone" }, { 435, "clone3" }, { 26, "ptrace" },
  { 377, "process_vm_writev" }, { 425, "io_uring_setup" }, { 426, "io_uring_enter" },
  { 427, "io_uring_register" }, { 311, "keyctl" }, { 309, "add_key" }, { 310, "request_key" },
  { 386, "bpf" }, { 383, "seccomp" }, { 128, "init_module" }, { 379, "finit_module" },
  { 347, "kexec_load" }, { 401, "kexec_file_load" }, { 364, "perf_event_open" },
  { 388, "userfaultfd" }, { 292, "recvfrom" }, { 3, "read" }, { 6, "close" }, { 1, "exit" },
  { 248, "exit_group" },
};

const char *
airlock_syscall_abi (guint32 audit_arch, guint32 nr)
{
  switch (audit_arch)
    {
    case AUDIT_ARCH_X86_64_:
      return (nr & X32_SYSCALL_BIT) ? "x32" : "x86_64";
    case AUDIT_ARCH_I386_:
      return "i386";
    case AUDIT_ARCH_AARCH64_:
      return "aarch64";
    case AUDIT_ARCH_ARM_:
      return "arm";
    default:
      return "unknown";
    }
}

static const char *
lookup_name (const SyscallName *table, gsize n, guint32 nr)
{
  for (gsize i = 0; i < n; i++)
    if (table[i].nr == nr)
      return table[i].name;
  return NULL;
}

const char *
airlock_syscall_known_name (guint32 audit_arch, guint32 nr)
{
  switch (audit_arch)
    {
    case AUDIT_ARCH_X86_64_:
      if (nr & X32_SYSCALL_BIT)
        return lookup_name (names_x32, G_N_ELEMENTS (names_x32), nr & ~X32_SYSCALL_BIT);
      return lookup_name (names_x86_64, G_N_ELEMENTS (names_x86_64), nr);
    case AUDIT_ARCH_I386_:
      return lookup_name (names_i386, G_N_ELEMENTS (names_i386), nr);
    case AUDIT_ARCH_AARCH64_:
      return lookup_name (names_aarch64, G_N_ELEMENTS (names_aarch64), nr);
    case AUDIT_ARCH_ARM_:
      return lookup_name (names_arm, G_N_ELEMENTS (names_arm), nr);
    default:
      return NULL;
    }
}

char *
airlock_syscall_unknown_name (guint32 audit_arch, guint32 nr)
{
  /* x32: the number within the x32 table, so "x32:syscall-N" reads as
   * that table's N. */
  if (audit_arch == AUDIT_ARCH_X86_64_ && (nr & X32_SYSCALL_BIT))
    nr &= ~X32_SYSCALL_BIT;
  return g_strdup_printf ("syscall-%u", nr);
}

char *
airlock_syscall_name (guint32 audit_arch, guint32 nr)
{
  const char *name = airlock_syscall_known_name (audit_arch, nr);

  return name ? g_strdup (name) : airlock_syscall_unknown_name (audit_arch, nr);
}

/* ---- results and wait statuses ---- */

typedef struct {
  int value;
  const char *name;
} ErrnoName;

/* The errnos a network call, exec or a denial returns.  Linux numbers; the
 * same on x86_64 and arm64 guests as on this host. */
static const ErrnoName errno_names[] = {
  { EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { ESRCH, "ESRCH" }, { EINTR, "EINTR" },
  { EIO, "EIO" }, { E2BIG, "E2BIG" }, { ENOEXEC, "ENOEXEC" }, { EBADF, "EBADF" },
  { ECHILD, "ECHILD" }, { EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" }, { EACCES, "EACCES" },
  { EFAULT, "EFAULT" }, { EBUSY, "EBUSY" }, { EEXIST, "EEXIST" }, { ENOTDIR, "ENOTDIR" },
  { EISDIR, "EISDIR" }, { EINVAL, "EINVAL" }, { ENFILE, "ENFILE" }, { EMFILE, "EMFILE" },
  { ETXTBSY, "ETXTBSY" }, { EPIPE, "EPIPE" }, { ENAMETOOLONG, "ENAMETOOLONG" },
  { ENOSYS, "ENOSYS" }, { ELOOP, "ELOOP" }, { ENOTSOCK, "ENOTSOCK" },
  { EDESTADDRREQ, "EDESTADDRREQ" }, { EMSGSIZE, "EMSGSIZE" }, { EPROTOTYPE, "EPROTOTYPE" },
  { ENOPROTOOPT, "ENOPROTOOPT" }, { EPROTONOSUPPORT, "EPROTONOSUPPORT" },
  { ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT" }, { EOPNOTSUPP, "EOPNOTSUPP" },
  { EPFNOSUPPORT, "EPFNOSUPPORT" }, { EAFNOSUPPORT, "EAFNOSUPPORT" },
  { EADDRINUSE, "EADDRINUSE" }, { EADDRNOTAVAIL, "EADDRNOTAVAIL" }, { ENETDOWN, "ENETDOWN" },
  { ENETUNREACH, "ENETUNREACH" }, { ENETRESET, "ENETRESET" },
  { ECONNABORTED, "ECONNABORTED" }, { ECONNRESET, "ECONNRESET" }, { ENOBUFS, "ENOBUFS" },
  { EISCONN, "EISCONN" }, { ENOTCONN, "ENOTCONN" }, { ETIMEDOUT, "ETIMEDOUT" },
  { ECONNREFUSED, "ECONNREFUSED" }, { EHOSTDOWN, "EHOSTDOWN" },
  { EHOSTUNREACH, "EHOSTUNREACH" }, { EALREADY, "EALREADY" }, { EINPROGRESS, "EINPROGRESS" },
};

char *
airlock_result_to_string (gint64 result)
{
  if (result >= 0)
    return g_strdup_printf ("%" G_GINT64_FORMAT, result);
  /* Not -result: the guest chooses the value, and G_MININT64 has no
   * negation (undefined behaviour; fuzz-verdict found it). */
  for (gsize i = 0; i < G_N_ELEMENTS (errno_names); i++)
    if (result == -(gint64) errno_names[i].value)
      return g_strdup (errno_names[i].name);
  /* -result cannot overflow a printf of the negation: print the value. */
  return g_strdup_printf ("errno-%" G_GUINT64_FORMAT, -(guint64) result);
}

static const char *
signal_name (int sig)
{
  switch (sig)
    {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGSYS: return "SIGSYS";
    default: return NULL;
    }
}

char *
airlock_wait_status_to_string (guint32 status)
{
  int st = (int) status;

  /* The wait status encoding is the same on every Linux arch. */
  if (WIFEXITED (st))
    return g_strdup_printf ("exited %d", WEXITSTATUS (st));
  if (WIFSIGNALED (st))
    {
      const char *name = signal_name (WTERMSIG (st));
      g_autofree char *sig = name ? g_strdup (name) : g_strdup_printf ("signal %d", WTERMSIG (st));

      return g_strdup_printf ("killed by %s%s", sig, WCOREDUMP (st) ? " (core dumped)" : "");
    }
  return g_strdup_printf ("wait status 0x%x", status);
}
