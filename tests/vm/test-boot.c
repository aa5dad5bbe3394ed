/* Boots real guests (TCG here) and checks what a user relies on: the
 * handshake completes, the port is exclusive, and every channel anomaly a
 * misbehaving guest can produce ends the run inconclusive with its reason.
 *
 * Paths: /vm/<arch>/<case>.  Needs QEMU for both arches and the guest images
 * (built into $AIRLOCK_CACHE_DIR on first use); skips with the reason when a
 * piece is missing. */
#include "config.h"

#include <airlock.h>

#include "vm-test-util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <unistd.h>

static VmTestImages guest_images;

static AirlockGuestImage *
image_for (AirlockArch arch)
{
  AirlockGuestImageOptions o = { 0 };

  return vm_test_guest_image (&guest_images, arch, &o, "guest image");
}

static guint qemu_children (void);

typedef struct {
  AirlockArch arch;
  const char *mode;           /* airlock.test= value, or NULL */
  AirlockAnomaly anomaly;     /* expected, NONE for a complete run */
  const char *reason_part;    /* expected in the run's reason */
} BootCase;

static AirlockVm *
boot (AirlockArch arch, const char *mode, guint tolerance_ms)
{
  AirlockGuestImage *image = image_for (arch);
  AirlockVmOptions o = {
    .accel = AIRLOCK_ACCEL_TCG,
    .guest_run_ms = 1000,
    .heartbeat_ms = 200,
    .heartbeat_tolerance_ms = tolerance_ms,
    .boot_timeout_ms = 60000,
    .test_mode = mode,
  };

  if (!image)
    return NULL;
  return vm_test_run (arch, image, &o);
}

static void
test_handshake (gconstpointer data)
{
  AirlockArch arch = GPOINTER_TO_INT (data);
  g_autoptr (AirlockVm) vm = boot (arch, NULL, 5000);
  AirlockChannel *ch;
  const AirlockGuestHello *hello;
  const AirlockTrailer *trailer;
  const AirlockVmTimings *t;
  static const guint8 zero[32];

  if (!vm)
    return;
  ch = airlock_vm_get_channel (vm);
  if (!airlock_vm_is_complete (vm))
    g_error ("boot of %s not complete: %s", airlock_arch_to_string (arch), airlock_vm_get_reason (vm));
  g_assert_cmpint (airlock_channel_get_state (ch), ==, AIRLOCK_CHANNEL_COMPLETE);
  g_assert_null (airlock_vm_get_reason (vm));

  hello = airlock_channel_get_hello (ch);
  g_assert_nonnull (hello);
  g_assert_cmpstr (hello->arch, ==, airlock_arch_to_uname (arch));
  g_assert_cmpstr (hello->kernel_release, ==, guest_images.images[arch]->kernel_release);
  /* The kernel refused the guest's second open of the evidence port. */
  g_assert_cmpuint (hello->second_open_errno, ==, EBUSY);
  /* Debian's kernels carry BTF and BPF LSM, read from the image before a
   * boot: the kernel-hook recorder loads in them (the supervisor tests'
   * hellos say which way, tests/vm/test-supervisor.c). */
  {
    AirlockKernelBpf bpf = AIRLOCK_KERNEL_BPF_NO_BTF;
    g_autoptr (GError) error = NULL;

    g_assert_true (airlock_guest_image_read_kernel_bpf (guest_images.images[arch], &bpf, &error));
    g_assert_no_error (error);
    g_assert_cmpint (bpf, ==, AIRLOCK_KERNEL_BPF_LSM);
  }

  /* 1000 ms at a 200 ms period: about five heartbeats, and the trailer's
   * counts agree with what arrived. */
  trailer = airlock_channel_get_trailer (ch);
  g_assert_nonnull (trailer);
  g_assert_cmpuint (airlock_channel_get_heartbeat_count (ch), >=, 3);
  g_assert_cmpuint (trailer->heartbeat_count, ==, airlock_channel_get_heartbeat_count (ch));
  g_assert_cmpuint (trailer->end_reason, ==, 1);
  g_assert_true (memcmp (airlock_channel_get_chain_head (ch), zero, 32) != 0);

  t = airlock_vm_get_timings (vm);
  g_assert_cmpint (t->begin, <, t->created);
  g_assert_cmpint (t->started, <, t->hello);
  g_assert_cmpint (t->hello, <, t->trailer);
  g_assert_cmpint (t->trailer, <=, t->stopped);
  g_test_message ("%s: ready %.2fs after start", airlock_arch_to_string (arch),
                  (t->hello - t->begin) / 1e6);
  /* The run reaped the QEMU it killed: nothing of it is left, not even a
   * zombie for PID 1 to collect (which libvirt would wait for). */
  g_assert_cmpuint (qemu_children (), ==, 0);

  {
    /* The console carries the kernel log and the init's lines. */
    g_autoptr (GBytes) console = airlock_vm_get_console (vm);
    g_autofree char *text = g_strndup (g_bytes_get_data (console, NULL), g_bytes_get_size (console));
    g_assert_nonnull (strstr (text, "airlock-init"));
  }
}

static void
test_anomaly (gconstpointer data)
{
  const BootCase *c = data;
  /* A short tolerance keeps the no-heartbeat case quick; the others send
   * heartbeats every 200 ms. */
  g_autoptr (AirlockVm) vm = boot (c->arch, c->mode, 2000);
  AirlockChannel *ch;

  if (!vm)
    return;
  ch = airlock_vm_get_channel (vm);
  g_assert_false (airlock_vm_is_complete (vm));
  g_assert_cmpint (airlock_channel_get_state (ch), ==, AIRLOCK_CHANNEL_INCONCLUSIVE);
  g_assert_nonnull (airlock_vm_get_reason (vm));
  g_test_message ("%s %s: %s", airlock_arch_to_string (c->arch), c->mode, airlock_vm_get_reason (vm));
  if (c->anomaly != AIRLOCK_ANOMALY_NONE)
    g_assert_cmpint (airlock_channel_get_anomaly (ch), ==, c->anomaly);
  if (c->reason_part && !strstr (airlock_vm_get_reason (vm), c->reason_part))
    g_error ("reason '%s' does not mention '%s'", airlock_vm_get_reason (vm), c->reason_part);
  /* Whatever went wrong, the bytes that arrived are kept. */
  g_assert_cmpuint (g_bytes_get_size (airlock_channel_get_raw (ch)), >, 0);
}

static void
test_forced_kvm_fails_fast (void)
{
  AirlockArch host;
  AirlockGuestImage *image;
  AirlockVmOptions o = { .accel = AIRLOCK_ACCEL_KVM };
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockVm) vm = NULL;
  gint64 begin;

  if (!airlock_arch_host (&host))
    {
      g_test_skip ("host arch is neither amd64 nor arm64");
      return;
    }
  image = image_for (host);
  if (!image)
    return;
  begin = g_get_monotonic_time ();
  vm = airlock_vm_new (host, image, &o, &error);
  if (vm)
    {
      g_test_skip ("KVM works on this machine: nothing to fail");
      return;
    }
  /* Not a hang, not a fallback: an error naming KVM and why. */
  g_assert_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_KVM);
  g_assert_nonnull (strstr (error->message, "KVM is not usable"));
  g_assert_cmpint (g_get_monotonic_time () - begin, <, 30 * G_USEC_PER_SEC);
  g_test_message ("forced KVM: %s", error->message);
}

static void
test_kvm_on_foreign_arch_refused (void)
{
  AirlockArch host, foreign;
  AirlockGuestImage *image;
  AirlockVmOptions o = { .accel = AIRLOCK_ACCEL_KVM };
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockVm) vm = NULL;

  if (!airlock_arch_host (&host))
    {
      g_test_skip ("host arch is neither amd64 nor arm64");
      return;
    }
  foreign = host == AIRLOCK_ARCH_AMD64 ? AIRLOCK_ARCH_ARM64 : AIRLOCK_ARCH_AMD64;
  image = image_for (foreign);
  if (!image)
    return;
  vm = airlock_vm_new (foreign, image, &o, &error);
  g_assert_null (vm);
  g_assert_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_KVM);
}

/* The pid of a QEMU whose command line names @domain, or 0. */
static pid_t
find_qemu_for (const char *domain)
{
  g_autoptr (GDir) proc = g_dir_open ("/proc", 0, NULL);
  g_autofree char *needle = g_strdup_printf ("guest=%s", domain);
  const char *name;

  while (proc && (name = g_dir_read_name (proc)))
    {
      g_autofree char *path = g_strdup_printf ("/proc/%s/cmdline", name);
      g_autofree char *cmd = NULL;
      gsize len;

      if (!g_ascii_isdigit (name[0]) || !g_file_get_contents (path, &cmd, &len, NULL))
        continue;
      for (gsize i = 0; i + 1 < len; i++)
        if (cmd[i] == '\0')
          cmd[i] = ' ';
      if (strstr (cmd, needle))
        return (pid_t) atoi (name);
    }
  return 0;
}

/* How many QEMU processes are children of this one, zombies included: the
 * test program is a child subreaper (main), so the QEMUs libvirt daemonizes
 * are its children until a run reaps them. */
static guint
qemu_children (void)
{
  g_autoptr (GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint n = 0;

  while (proc && (name = g_dir_read_name (proc)))
    {
      g_autofree char *path = g_strdup_printf ("/proc/%s/stat", name);
      g_autofree char *stat = NULL;
      const char *end;
      int ppid = 0;

      if (!g_ascii_isdigit (name[0]) || !g_file_get_contents (path, &stat, NULL, NULL)
          || !(end = strrchr (stat, ')')))
        continue;
      if (sscanf (end + 2, "%*c %d", &ppid) == 1 && ppid == getpid ()
          && strstr (stat, "(qemu-system"))
        n++;
    }
  return n;
}

/* The domain name of the run whose owner is @pid, from its run directory
 * (<cache>/runs/<run id>/owner), or NULL. */
static char *
find_run_of (const char *cache_dir, pid_t pid)
{
  g_autofree char *runs = g_build_filename (cache_dir, "runs", NULL);
  g_autoptr (GDir) dir = g_dir_open (runs, 0, NULL);
  const char *name;

  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree char *owner = g_build_filename (runs, name, "owner", NULL);
      g_autofree char *text = NULL;
      g_auto (GStrv) f = NULL;

      if (!g_file_get_contents (owner, &text, NULL, NULL))
        continue;
      f = g_strsplit (text, " ", 4);
      if (g_strv_length (f) == 4 && g_ascii_strtoll (f[2], NULL, 10) == pid)
        return g_strdup_printf ("airlock-arm64-%s", name);
    }
  return NULL;
}

/* A run killed with SIGKILL leaves its QEMU running; the next run must find
 * it by its metadata and remove it, with its run directory. */
static void
test_crashed_run_is_swept (void)
{
  AirlockGuestImage *image = image_for (AIRLOCK_ARCH_ARM64);
  const char *cli = g_getenv ("AIRLOCK_CLI");
  g_autofree char *cache_dir = airlock_default_cache_dir ();
  g_autofree char *domain = NULL;
  g_autofree char *run_dir = NULL;
  const char *argv[] = { cli, "boot", "--arch", "arm64", "--accel", "tcg", "--run-ms", "600000", NULL };
  GPid child;
  pid_t qemu = 0;
  int status;
  AirlockVmOptions o = { .accel = AIRLOCK_ACCEL_TCG };
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockVm) vm = NULL;
  GPtrArray *swept;
  gboolean found = FALSE;

  if (!image)
    return;
  if (!cli)
    {
      g_test_skip ("AIRLOCK_CLI is not set (run through meson test)");
      return;
    }
  /* The doomed run: a guest that would heartbeat for ten minutes. */
  g_assert_true (g_spawn_async (NULL, (char **) argv, NULL,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL
                                | G_SPAWN_STDERR_TO_DEV_NULL,
                                NULL, NULL, &child, &error));
  g_assert_no_error (error);
  for (int i = 0; i < 900 && !qemu; i++)
    {
      if (!domain)
        domain = find_run_of (cache_dir, child);
      if (domain)
        qemu = find_qemu_for (domain);
      if (!qemu)
        g_usleep (100 * 1000);
    }
  if (!qemu)
    {
      kill (child, SIGKILL);
      waitpid (child, &status, 0);
      g_error ("the doomed run never started a QEMU (domain %s)", domain ? domain : "unknown");
    }
  /* Let it get past the handshake, then crash it. */
  g_usleep (3 * G_USEC_PER_SEC);
  g_assert_no_errno (kill (child, SIGKILL));
  g_assert_cmpint (waitpid (child, &status, 0), ==, child);
  g_spawn_close_pid (child);
  g_assert_cmpint (kill (qemu, 0), ==, 0);
  run_dir = g_build_filename (cache_dir, "runs", domain + strlen ("airlock-arm64-"), NULL);
  g_assert_true (g_file_test (run_dir, G_FILE_TEST_IS_DIR));

  vm = airlock_vm_new (AIRLOCK_ARCH_ARM64, image, &o, &error);
  g_assert_no_error (error);
  swept = airlock_vm_get_swept (vm);
  for (guint i = 0; i < swept->len; i++)
    if (g_str_equal (swept->pdata[i], domain))
      found = TRUE;
  if (!found)
    g_error ("leftover domain '%s' was not swept", domain);
  /* Its QEMU and its run directory are gone. */
  for (int i = 0; i < 100 && kill (qemu, 0) == 0; i++)
    g_usleep (100 * 1000);
  g_assert_cmpint (kill (qemu, 0), ==, -1);
  g_assert_false (g_file_test (run_dir, G_FILE_TEST_EXISTS));
}

typedef struct {
  AirlockVm *vm;
  gboolean ok;
} RunThread;

static gpointer
run_in_thread (gpointer data)
{
  RunThread *rt = data;

  rt->ok = airlock_vm_run (rt->vm, NULL);
  return NULL;
}

/* QEMU killed under a running guest: the run ends, inconclusive, saying so. */
static void
test_qemu_killed (void)
{
  AirlockGuestImage *image = image_for (AIRLOCK_ARCH_ARM64);
  AirlockVmOptions o = { .accel = AIRLOCK_ACCEL_TCG, .guest_run_ms = 600000 };
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockVm) vm = NULL;
  RunThread rt = { 0 };
  GThread *thread;
  pid_t qemu = 0;

  if (!image)
    return;
  vm = airlock_vm_new (AIRLOCK_ARCH_ARM64, image, &o, &error);
  g_assert_no_error (error);
  rt.vm = vm;
  thread = g_thread_new ("run", run_in_thread, &rt);
  /* Wait until the guest is heartbeating, then kill its QEMU. */
  for (int i = 0; i < 600; i++)
    {
      if (!qemu)
        qemu = find_qemu_for (airlock_vm_get_domain_name (vm));
      if (qemu && airlock_vm_get_timings (vm)->hello)
        break;
      g_usleep (100 * 1000);
    }
  g_assert_cmpint (qemu, >, 0);
  /* Daemonized by libvirt, it is still our child: we are a subreaper. */
  g_assert_cmpuint (qemu_children (), ==, 1);
  g_assert_no_errno (kill (qemu, SIGKILL));
  g_thread_join (thread);
  /* It died on its own; the run reaped the zombie all the same. */
  g_assert_cmpuint (qemu_children (), ==, 0);

  g_assert_true (rt.ok);
  g_assert_false (airlock_vm_is_complete (vm));
  g_test_message ("QEMU killed: %s", airlock_vm_get_reason (vm));
  g_assert_nonnull (strstr (airlock_vm_get_reason (vm), "QEMU"));
}

/* A guest that cannot reach its hello in time ends the run, not hangs it. */
static void
test_boot_timeout (void)
{
  AirlockGuestImage *image = image_for (AIRLOCK_ARCH_ARM64);
  AirlockVmOptions o = { .accel = AIRLOCK_ACCEL_TCG, .boot_timeout_ms = 200 };
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockVm) vm = NULL;

  if (!image)
    return;
  vm = airlock_vm_new (AIRLOCK_ARCH_ARM64, image, &o, &error);
  g_assert_no_error (error);
  g_assert_true (airlock_vm_run (vm, &error));
  g_assert_false (airlock_vm_is_complete (vm));
  g_assert_cmpint (airlock_channel_get_anomaly (airlock_vm_get_channel (vm)), ==, AIRLOCK_ANOMALY_NO_HELLO);
  g_assert_nonnull (strstr (airlock_vm_get_reason (vm), "boot timeout"));
  /* Torn down promptly: the domain is gone. */
  g_assert_cmpint (find_qemu_for (airlock_vm_get_domain_name (vm)), ==, 0);
}

static const char *const mode_names[] = {
  "wrong-nonce", "seq-gap", "oversize", "unknown-type", "no-heartbeat", "no-trailer", "panic",
};

int
main (int argc, char **argv)
{
  static BootCase cases[AIRLOCK_N_ARCHES][G_N_ELEMENTS (mode_names)];

  g_test_init (&argc, &argv, NULL);
  g_assert_true (airlock_vm_adopt_qemu (NULL));

  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      const char *an = airlock_arch_to_string (a);
      g_autofree char *p = g_strdup_printf ("/vm/%s/boot-handshake", an);
      g_test_add_data_func (p, GINT_TO_POINTER (a), test_handshake);
    }
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    for (unsigned m = 0; m < G_N_ELEMENTS (mode_names); m++)
      {
        BootCase *c = &cases[a][m];
        g_autofree char *p = g_strdup_printf ("/vm/%s/%s-is-inconclusive", airlock_arch_to_string (a),
                                              mode_names[m]);
        c->arch = a;
        c->mode = mode_names[m];
        switch (m)
          {
          case 0: c->anomaly = AIRLOCK_ANOMALY_WRONG_NONCE; break;
          case 1: c->anomaly = AIRLOCK_ANOMALY_SEQUENCE; break;
          case 2: c->anomaly = AIRLOCK_ANOMALY_OVERSIZE; break;
          case 3: c->anomaly = AIRLOCK_ANOMALY_UNKNOWN_TYPE; break;
          case 4: c->anomaly = AIRLOCK_ANOMALY_HEARTBEAT_GAP; break;
          case 5: c->reason_part = "trailer"; break;
          case 6: c->reason_part = "kernel panic"; break;
          }
        g_test_add_data_func (p, c, test_anomaly);
      }
  g_test_add_func ("/vm/accel/forced-kvm-fails-fast", test_forced_kvm_fails_fast);
  g_test_add_func ("/vm/accel/kvm-on-foreign-arch-refused", test_kvm_on_foreign_arch_refused);
  g_test_add_func ("/vm/lifecycle/qemu-killed-is-inconclusive", test_qemu_killed);
  g_test_add_func ("/vm/lifecycle/boot-timeout-is-inconclusive", test_boot_timeout);
  g_test_add_func ("/vm/lifecycle/crashed-run-is-swept", test_crashed_run_is_swept);
  return g_test_run ();
}
