/* lib/vm without a hypervisor: the domain XML for each arch and accelerator,
 * and the ownership checks that decide what a later run may sweep. */
#define _GNU_SOURCE /* setresuid */

#include "config.h"

#include "vm/connection-private.h"
#include "vm/domain-xml-private.h"
#include "vm/capture-file-private.h"
#include "libvirt-env-private.h"
#include "fsutil-private.h"
#include "protocol.h"
#include "paths.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static AirlockDomainSpec
base_spec (AirlockArch arch, const char *virt_type)
{
  AirlockDomainSpec s = {
    .arch = arch,
    .name = "airlock-test-0123",
    .uuid = "6a1f7c1e-2f0b-4b8e-9d7a-0c2d4b6f8a10",
    .virt_type = virt_type,
    .memory_mib = 512,
    .vcpus = 1,
    .kernel = "/cache/vmlinux",
    .initrd = "/cache/initramfs.cpio",
    .cmdline = "airlock.run_ms=1000",
    .owner_boot_id = "b00t",
    .owner_host = "builder",
    .owner_pid = 4242,
    .owner_start_time = 99,
    .run_dir = "/cache/runs/0123",
  };
  return s;
}

static void
assert_contains (const char *xml, const char *needle)
{
  if (!strstr (xml, needle))
    g_error ("domain XML lacks '%s':\n%s", needle, xml);
}

static void
assert_lacks (const char *xml, const char *needle)
{
  if (strstr (xml, needle))
    g_error ("domain XML has unexpected '%s':\n%s", needle, xml);
}

static void
assert_well_formed (const char *xml)
{
  static const GMarkupParser parser = { 0 };
  g_autoptr (GMarkupParseContext) ctx = g_markup_parse_context_new (&parser, 0, NULL, NULL);
  g_autoptr (GError) error = NULL;

  g_markup_parse_context_parse (ctx, xml, -1, &error);
  g_assert_no_error (error);
  g_markup_parse_context_end_parse (ctx, &error);
  g_assert_no_error (error);
}

/* Every guest: direct kernel boot, pty console, the evidence channel as a
 * unix channel (libvirt streams need that), no reboot, our metadata. */
static void
assert_common (const char *xml)
{
  assert_well_formed (xml);
  assert_contains (xml, "<kernel>/cache/vmlinux</kernel>");
  assert_contains (xml, "<initrd>/cache/initramfs.cpio</initrd>");
  assert_contains (xml, "<serial type='pty'>");
  assert_contains (xml, "<console type='pty'>");
  assert_contains (xml, "<channel type='unix'><source mode='bind'/><target type='virtio' name='" AIRLOCK_PORT_EVIDENCE "'/>");
  assert_contains (xml, "<on_reboot>destroy</on_reboot>");
  assert_contains (xml, "<on_poweroff>destroy</on_poweroff>");
  assert_contains (xml, "panic=-1");
  assert_contains (xml, "airlock.run_ms=1000");
  assert_contains (xml, "<airlock:run xmlns:airlock='" AIRLOCK_METADATA_NS "'>");
  assert_contains (xml, "pid='4242'");
  assert_contains (xml, "start-time='99'");
  assert_contains (xml, "<airlock:run-dir path='/cache/runs/0123'/>");
  assert_lacks (xml, "<interface");
  assert_lacks (xml, "<loader");
}

static void
test_xml_amd64_tcg (void)
{
  AirlockDomainSpec s = base_spec (AIRLOCK_ARCH_AMD64, "qemu");
  g_autofree char *xml = airlock_domain_xml_build (&s);

  assert_common (xml);
  assert_contains (xml, "<domain type='qemu'");
  assert_contains (xml, "arch='x86_64' machine='q35'");
  /* -cpu max: images built for x86-64-v2/v3 crash on qemu64.  All of it
   * but ERMS, which makes the kernel and glibc copy and zero a byte per
   * rep iteration, a translation block each under TCG. */
  assert_contains (xml, "<cpu mode='maximum'><feature policy='disable' name='erms'/></cpu>");
  assert_contains (xml, "console=ttyS0");
  assert_lacks (xml, "<emulator>");
  /* Only asked for: a daemon's libvirt may not know the element. */
  assert_lacks (xml, "<qemu:capabilities>");
}

/* The embedded driver's start reads the guest CPU back in two monitor
 * calls, not one per CPU property; the CPU itself is the same. */
static void
test_xml_amd64_short_cpu_check (void)
{
  AirlockDomainSpec s = base_spec (AIRLOCK_ARCH_AMD64, "qemu");
  g_autofree char *xml = NULL;
  g_autofree char *kvm_xml = NULL;
  g_autofree char *arm_xml = NULL;

  s.short_cpu_check = TRUE;
  xml = airlock_domain_xml_build (&s);
  assert_common (xml);
  assert_contains (xml, "<cpu mode='maximum'><feature policy='disable' name='erms'/></cpu>");
  assert_contains (xml, "<qemu:capabilities>\n    <qemu:del capability='cpu-unavailable-features'/>\n"
                   "  </qemu:capabilities>");
  s.virt_type = "kvm";
  kvm_xml = airlock_domain_xml_build (&s);
  assert_lacks (kvm_xml, "<qemu:capabilities>");
  s = base_spec (AIRLOCK_ARCH_ARM64, "qemu");
  s.short_cpu_check = TRUE;
  arm_xml = airlock_domain_xml_build (&s);
  assert_lacks (arm_xml, "<qemu:capabilities>");
}

static void
test_xml_amd64_kvm (void)
{
  AirlockDomainSpec s = base_spec (AIRLOCK_ARCH_AMD64, "kvm");
  g_autofree char *xml = airlock_domain_xml_build (&s);

  assert_common (xml);
  assert_contains (xml, "<domain type='kvm'");
  assert_contains (xml, "<cpu mode='host-passthrough'/>");
}

static void
test_xml_arm64_tcg (void)
{
  AirlockDomainSpec s = base_spec (AIRLOCK_ARCH_ARM64, "qemu");
  g_autofree char *xml = airlock_domain_xml_build (&s);

  assert_common (xml);
  assert_contains (xml, "arch='aarch64' machine='virt'");
  assert_contains (xml, "<model fallback='forbid'>cortex-a57</model>");
  assert_contains (xml, "console=ttyAMA0");
  /* Under TCG the kernel does not unmap itself at each system call. */
  assert_contains (xml, " kpti=0 ");
  assert_lacks (xml, "qemu:commandline>");
}

/* kpti=0 is for the emulated CPU only: under KVM, and on amd64, the
 * kernel decides for the CPU it runs on. */
static void
test_xml_kpti_only_arm64_tcg (void)
{
  AirlockDomainSpec s = base_spec (AIRLOCK_ARCH_ARM64, "kvm");
  g_autofree char *arm_kvm = airlock_domain_xml_build (&s);
  g_autofree char *amd_tcg = NULL;
  g_autofree char *amd_kvm = NULL;

  assert_common (arm_kvm);
  assert_lacks (arm_kvm, "kpti");
  s = base_spec (AIRLOCK_ARCH_AMD64, "qemu");
  amd_tcg = airlock_domain_xml_build (&s);
  assert_lacks (amd_tcg, "kpti");
  s.virt_type = "kvm";
  amd_kvm = airlock_domain_xml_build (&s);
  assert_lacks (amd_kvm, "kpti");
  g_assert_nonnull (strstr (airlock_domain_kernel_tokens (AIRLOCK_ARCH_ARM64, FALSE), " kpti=0"));
  g_assert_cmpstr (airlock_domain_kernel_tokens (AIRLOCK_ARCH_ARM64, TRUE), ==,
                   "panic=-1 quiet cryptomgr.notests");
  /* The idle guest's periodic timers off (the warped clock's pace: see
   * airlock_domain_kernel_tokens), under TCG only; tsc=reliable on amd64
   * alone (arm64's counter has no clocksource watchdog). */
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      const char *tcg = airlock_domain_kernel_tokens ((AirlockArch) a, FALSE);
      const char *kvm = airlock_domain_kernel_tokens ((AirlockArch) a, TRUE);

      g_assert_nonnull (strstr (tcg, " nowatchdog"));
      g_assert_nonnull (strstr (tcg, " sysctl.vm.compaction_proactiveness=0"));
      g_assert_true ((strstr (tcg, " tsc=reliable") != NULL) == (a == AIRLOCK_ARCH_AMD64));
      g_assert_null (strstr (kvm, "nowatchdog"));
      g_assert_null (strstr (kvm, "tsc="));
    }
}

static void
test_xml_arm64_cpu_max (void)
{
  AirlockDomainSpec s = base_spec (AIRLOCK_ARCH_ARM64, "qemu");
  g_autofree char *xml = NULL;

  s.arm64_cpu_max = TRUE;
  xml = airlock_domain_xml_build (&s);
  assert_common (xml);
  assert_lacks (xml, "cortex-a57");
  assert_contains (xml, "<qemu:arg value='max,pauth-impdef=on'/>");
}

/* The warped clock: QEMU's instruction counter, idle time skipped, and the
 * RTC on the guest's time, under TCG on both arches; under KVM there is no
 * counter (the VM refuses the warped clock there, and the XML never asks
 * for it). */
static void
test_xml_icount (void)
{
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      AirlockDomainSpec s = base_spec ((AirlockArch) a, "qemu");
      AirlockDomainSpec k = base_spec ((AirlockArch) a, "kvm");
      g_autofree char *xml = NULL;
      g_autofree char *kvm = NULL;
      g_autofree char *plain = NULL;

      plain = airlock_domain_xml_build (&s);
      assert_lacks (plain, "-icount");
      assert_contains (plain, "<clock offset='utc'/>");
      s.icount = k.icount = TRUE;
      xml = airlock_domain_xml_build (&s);
      assert_common (xml);
      assert_contains (xml, "<qemu:commandline>\n    <qemu:arg value='-icount'/>\n"
                            "    <qemu:arg value='shift=2,sleep=off'/>\n");
      /* The RTC warps with the rest: no clock of the host's in the guest. */
      assert_contains (xml, "<clock offset='utc'><timer name='rtc' track='guest'/></clock>");
      kvm = airlock_domain_xml_build (&k);
      assert_well_formed (kvm);
      assert_lacks (kvm, "-icount");
      assert_lacks (kvm, "track='guest'");
    }
}

/* Embedded driver: QEMU binds console and evidence sockets in our own
 * directory, so no pty (and no libvirt chardev stream) is involved. */
static void
test_xml_local_sockets (void)
{
  AirlockDomainSpec s = base_spec (AIRLOCK_ARCH_ARM64, "qemu");
  g_autofree char *xml = NULL;

  s.socket_dir = "/run/airlock/0123";
  xml = airlock_domain_xml_build (&s);
  assert_well_formed (xml);
  assert_contains (xml, "<serial type='unix'><source mode='bind' path='/run/airlock/0123/console.sock'/>");
  assert_contains (xml, "<console type='unix'>");
  assert_contains (xml, "<source mode='bind' path='/run/airlock/0123/evidence.sock'/><target type='virtio' name='" AIRLOCK_PORT_EVIDENCE "'/>");
  /* Both directories are in the metadata, so a later run can remove them. */
  assert_contains (xml, "<airlock:run-dir path='/run/airlock/0123'/>");
  assert_lacks (xml, "type='pty'");
}

static void
test_xml_escapes_values (void)
{
  AirlockDomainSpec s = base_spec (AIRLOCK_ARCH_AMD64, "qemu");
  g_autofree char *xml = NULL;

  /* A path with markup characters must not inject elements. */
  s.kernel = "/tmp/a'b<c>&d/vmlinux";
  s.emulator = "/opt/q&q/qemu";
  xml = airlock_domain_xml_build (&s);
  assert_well_formed (xml);
  assert_contains (xml, "<kernel>/tmp/a&apos;b&lt;c&gt;&amp;d/vmlinux</kernel>");
  assert_contains (xml, "<emulator>/opt/q&amp;q/qemu</emulator>");
}

static void
test_owner_self_alive (void)
{
  const AirlockOwner *self = airlock_owner_self ();

  g_assert_cmpint (self->pid, ==, getpid ());
  g_assert_cmpint (self->start_time, >, 0);
  g_assert_true (airlock_owner_is_alive (self->boot_id, self->host, self->pid, self->start_time));
}

static void
test_owner_dead_cases (void)
{
  const AirlockOwner *self = airlock_owner_self ();

  /* Same host, earlier boot: dead. */
  g_assert_false (airlock_owner_is_alive ("another-boot", self->host, self->pid, self->start_time));
  /* Our pid with another start time: a recycled pid, so dead. */
  g_assert_false (airlock_owner_is_alive (self->boot_id, self->host, self->pid, self->start_time + 1));
  /* A pid that cannot exist. */
  g_assert_false (airlock_owner_is_alive (self->boot_id, self->host, 0x7ffffff0, 1));
  /* Another machine's run on a shared hypervisor is never ours to remove. */
  g_assert_true (airlock_owner_is_alive ("x", "some-other-host", 1, 1));
}

static void
test_rm_rf_does_not_follow_links (void)
{
  g_autofree char *base = g_dir_make_tmp ("airlock-test-XXXXXX", NULL);
  g_autofree char *victim = g_build_filename (base, "victim", NULL);
  g_autofree char *keep = g_build_filename (victim, "keep", NULL);
  g_autofree char *tree = g_build_filename (base, "tree", NULL);
  g_autofree char *sub = g_build_filename (tree, "sub", NULL);
  g_autofree char *file = g_build_filename (sub, "f", NULL);
  g_autofree char *link = g_build_filename (tree, "link", NULL);

  g_assert_cmpint (g_mkdir_with_parents (victim, 0700), ==, 0);
  g_assert_true (g_file_set_contents (keep, "x", -1, NULL));
  g_assert_cmpint (g_mkdir_with_parents (sub, 0700), ==, 0);
  g_assert_true (g_file_set_contents (file, "x", -1, NULL));
  g_assert_no_errno (symlink (victim, link));

  airlock_rm_rf (tree);
  g_assert_false (g_file_test (tree, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (keep, G_FILE_TEST_EXISTS));
  airlock_rm_rf (base);
  g_assert_false (g_file_test (base, G_FILE_TEST_EXISTS));
}


/* ---- the capture file under a system daemon ---- */

/* What libvirtd 9.0 answers on Debian 12 (trimmed): an SELinux model
 * first, whose labels are not ids, then DAC's. */
static const char caps_xml[] =
  "<capabilities><host>\n"
  "  <secmodel>\n    <model>selinux</model>\n    <doi>0</doi>\n"
  "    <baselabel type='kvm'>system_u:system_r:svirt_t:s0</baselabel>\n"
  "    <baselabel type='qemu'>system_u:system_r:svirt_tcg_t:s0</baselabel>\n  </secmodel>\n"
  "  <secmodel>\n    <model>dac</model>\n    <doi>0</doi>\n"
  "    <baselabel type='kvm'>+64055:+994</baselabel>\n"
  "    <baselabel type='qemu'>+64056:+995</baselabel>\n  </secmodel>\n"
  "</host></capabilities>\n";

static void
test_capture_qemu_user (void)
{
  guint32 uid = 1, gid = 1;

  g_assert_true (airlock_capture_qemu_user (caps_xml, "kvm", &uid, &gid));
  g_assert_cmpuint (uid, ==, 64055);
  g_assert_cmpuint (gid, ==, 994);
  g_assert_true (airlock_capture_qemu_user (caps_xml, "qemu", &uid, &gid));
  g_assert_cmpuint (uid, ==, 64056);
  g_assert_cmpuint (gid, ==, 995);
  /* No DAC model, a label by name, none for the type: unknown, and the
   * run refuses rather than guess. */
  uid = gid = 7;
  g_assert_false (airlock_capture_qemu_user ("<capabilities><host><secmodel><model>none</model>"
                                             "</secmodel></host></capabilities>", "kvm", &uid, &gid));
  g_assert_false (airlock_capture_qemu_user ("<secmodel><model>dac</model><baselabel type='kvm'>"
                                             "libvirt-qemu:kvm</baselabel></secmodel>", "kvm", &uid, &gid));
  g_assert_false (airlock_capture_qemu_user ("<secmodel><model>dac</model><baselabel type='kvm'>"
                                             "+1:+2</baselabel></secmodel>", "qemu", &uid, &gid));
  g_assert_cmpuint (uid, ==, 7);
  g_assert_cmpuint (gid, ==, 7);
}




/* LIBVIRT_LOG_OUTPUTS as main() found it: the library's constructor's. */
static char *log_outputs_at_main;

static gpointer
idle_thread (gpointer data)
{
  return data;
}

/* libvirt's log is pointed at the cache before main() (meson sets
 * AIRLOCK_CACHE_DIR for this test), and initialising it later, once
 * threads exist, changes nothing in the environment: setenv() then could
 * race another thread's getenv(), and GLib says so in every test log. */
static void
test_libvirt_log_set_before_main (void)
{
  const char *cache = g_getenv ("AIRLOCK_CACHE_DIR");
  g_autofree char *expected = NULL;
  g_autofree char *dir = g_dir_make_tmp ("airlock-test-libvirt-env-XXXXXX", NULL);
  g_autofree char *other = g_build_filename (dir, "other-cache", NULL);
  GThread *thread;

  g_assert_nonnull (cache);
  g_assert_nonnull (dir);
  expected = g_strdup_printf ("3:file:%s/libvirt.log", cache);
  g_assert_cmpstr (log_outputs_at_main, ==, expected);
  g_assert_cmpstr (airlock_libvirt_env_log_dir (), ==, cache);

  thread = g_thread_new ("airlock-test", idle_thread, NULL);
  g_thread_join (thread);
  airlock_libvirt_env_init (other);
  g_assert_cmpstr (g_getenv ("LIBVIRT_LOG_OUTPUTS"), ==, expected);
  /* The log's directory is made when libvirt is about to open it. */
  g_assert_true (g_file_test (cache, G_FILE_TEST_IS_DIR));
  g_assert_false (g_file_test (other, G_FILE_TEST_EXISTS));
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* A private directory made first in a fresh cache (a registry copy's, the
 * embedded driver's slots, the KVM probe's record) leaves the cache's root
 * searchable: QEMU run by a system libvirtd as libvirt-qemu must reach the
 * guest images beside it (seen: qemu:///system's boot failed with
 * "Permission denied" on the kernel once a 0700 directory came first). */
static void
test_cache_root_reachable (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("airlock-cache-XXXXXX", NULL);
  g_autofree char *root = g_build_filename (tmp, "cache", NULL);
  g_autofree char *priv = g_build_filename (root, "oci", "deep", NULL);
  mode_t old = umask (022);
  struct stat st;

  g_assert_cmpint (airlock_cache_mkdir (root, priv, 0700), ==, 0);
  umask (old);
  g_assert_cmpint (stat (root, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0755);
  g_assert_cmpint (stat (priv, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0700);
  airlock_rm_rf (tmp);
}

/* A relative cache directory from the environment is made absolute: the
 * paths under it go into domains, which libvirt and QEMU resolve elsewhere
 * than our working directory (an embedded driver refuses a relative root). */
static void
test_cache_dir_absolute (void)
{
  g_autofree char *saved = g_strdup (g_getenv ("AIRLOCK_CACHE_DIR"));
  g_autofree char *cwd = g_get_current_dir ();
  g_autofree char *want = g_build_filename (cwd, "some", "cache", NULL);
  g_autofree char *got = NULL;

  g_setenv ("AIRLOCK_CACHE_DIR", "some/./cache", TRUE);
  got = airlock_default_cache_dir ();
  if (saved)
    g_setenv ("AIRLOCK_CACHE_DIR", saved, TRUE);
  else
    g_unsetenv ("AIRLOCK_CACHE_DIR");
  g_assert_cmpstr (got, ==, want);
}

int
main (int argc, char **argv)
{
  log_outputs_at_main = g_strdup (g_getenv ("LIBVIRT_LOG_OUTPUTS"));
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/vm/libvirt-env/log-set-before-main", test_libvirt_log_set_before_main);
  g_test_add_func ("/vm/paths/cache-dir-absolute", test_cache_dir_absolute);
  g_test_add_func ("/vm/domain-xml/amd64-tcg", test_xml_amd64_tcg);
  g_test_add_func ("/vm/domain-xml/amd64-short-cpu-check", test_xml_amd64_short_cpu_check);
  g_test_add_func ("/vm/domain-xml/amd64-kvm", test_xml_amd64_kvm);
  g_test_add_func ("/vm/domain-xml/arm64-tcg", test_xml_arm64_tcg);
  g_test_add_func ("/vm/domain-xml/arm64-cpu-max", test_xml_arm64_cpu_max);
  g_test_add_func ("/vm/domain-xml/kpti-only-arm64-tcg", test_xml_kpti_only_arm64_tcg);
  g_test_add_func ("/vm/domain-xml/icount-warps-under-tcg-only", test_xml_icount);
  g_test_add_func ("/vm/domain-xml/local-sockets", test_xml_local_sockets);
  g_test_add_func ("/vm/domain-xml/escapes-values", test_xml_escapes_values);
  g_test_add_func ("/vm/owner/self-is-alive", test_owner_self_alive);
  g_test_add_func ("/vm/owner/dead-cases", test_owner_dead_cases);
  g_test_add_func ("/vm/cleanup/rm-rf-does-not-follow-links", test_rm_rf_does_not_follow_links);
  g_test_add_func ("/vm/cache/root-reachable-by-qemu", test_cache_root_reachable);
  g_test_add_func ("/vm/capture/qemu-user-from-capabilities", test_capture_qemu_user);
  return g_test_run ();
}
