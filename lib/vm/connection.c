#include "config.h"

#include "vm/connection-private.h"

#include "fsutil-private.h"

#include "vm/domain-xml-private.h"
#include "libvirt-env-private.h"
#include "vm/vm.h"

#include <errno.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <string.h>
#include <sys/file.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Embedded-driver slots: the embedded QEMU driver locks its root directory,
 * so concurrent airlock processes each take a slot of their own.  A slot
 * keeps its QEMU capabilities cache between runs. */
#define N_EMBED_SLOTS 32

G_DEFINE_QUARK (airlock-vm-error-quark, airlock_vm_error)

static void
silence_libvirt (void *user_data, virErrorPtr error)
{
  /* The library never prints: errors reach the caller through GError. */
}

static gpointer
event_loop_thread (gpointer data)
{
  for (;;)
    virEventRunDefaultImpl ();
  return NULL;
}

static gpointer
init_libvirt_once (gpointer data)
{
  const char *cache_dir = data;

  airlock_libvirt_env_init (cache_dir);
  virSetErrorFunc (NULL, silence_libvirt);
  virInitialize ();
  /* Streams, keepalives and domain events need an event loop; the embedded
   * driver requires the application to run one. */
  virEventRegisterDefaultImpl ();
  g_thread_unref (g_thread_new ("airlock-libvirt-events", event_loop_thread, NULL));
  return NULL;
}

static void
init_libvirt (const char *cache_dir)
{
  static GOnce once = G_ONCE_INIT;
  g_once (&once, init_libvirt_once, (gpointer) cache_dir);
}

/* Field @n (1-based, as in proc(5)) of /proc/@pid/stat, or NULL.  comm may
 * contain spaces and parentheses: the fields start after the last ')'. */
static char *
proc_stat_field (pid_t pid, guint n)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *text = NULL;
  g_auto (GStrv) fields = NULL;
  const char *p;

  if (n < 3 || !g_file_get_contents (path, &text, NULL, NULL) || !(p = strrchr (text, ')')))
    return NULL;
  fields = g_strsplit (p + 2, " ", -1);
  if (g_strv_length (fields) < n - 2)
    return NULL;
  return g_strdup (fields[n - 3]);
}

static gint64
proc_start_time (gint64 pid)
{
  /* starttime is field 22 */
  g_autofree char *start = proc_stat_field ((pid_t) pid, 22);

  return start ? g_ascii_strtoll (start, NULL, 10) : -1;
}

static gpointer
owner_self_once (gpointer data)
{
  AirlockOwner *o = g_new0 (AirlockOwner, 1);
  g_autofree char *boot_id = NULL;

  if (g_file_get_contents ("/proc/sys/kernel/random/boot_id", &boot_id, NULL, NULL))
    o->boot_id = g_strdup (g_strstrip (boot_id));
  else
    o->boot_id = g_strdup ("");
  o->host = g_strdup (g_get_host_name ());
  o->pid = getpid ();
  o->start_time = proc_start_time (o->pid);
  return o;
}

const AirlockOwner *
airlock_owner_self (void)
{
  static GOnce once = G_ONCE_INIT;
  return g_once (&once, owner_self_once, NULL);
}

gboolean
airlock_owner_is_alive (const char *boot_id, const char *host, gint64 pid, gint64 start_time)
{
  const AirlockOwner *self = airlock_owner_self ();

  /* Another machine's run, seen through a shared hypervisor: not ours to
   * judge. */
  if (g_strcmp0 (host, self->host) != 0)
    return TRUE;
  /* Same machine, earlier boot: that process is gone. */
  if (g_strcmp0 (boot_id, self->boot_id) != 0)
    return FALSE;
  if (pid <= 0)
    return FALSE;
  if (kill ((pid_t) pid, 0) < 0 && errno == ESRCH)
    return FALSE;
  /* A recycled pid has another start time. */
  return proc_start_time (pid) == start_time;
}

/* Attributes of <airlock:owner> and <airlock:run-dir> in our metadata. */
typedef struct {
  char *boot_id;
  char *host;
  gint64 pid;
  gint64 start_time;
  GPtrArray *run_dirs;
  gboolean found;
  gboolean whole_domain;  /* parsing a status file: only airlock:-prefixed elements */
} OwnerMeta;

static void
set_str (char **field, const char *value)
{
  g_free (*field);
  *field = g_strdup (value);
}

static void
meta_start (GMarkupParseContext *ctx, const char *element, const char **names,
            const char **values, gpointer user_data, GError **error)
{
  OwnerMeta *m = user_data;
  const char *local;

  /* Status files hold the whole domain: only our namespace's elements.
   * virDomainGetMetadata returns just our element, however it is prefixed. */
  if (g_str_has_prefix (element, "airlock:"))
    local = element + strlen ("airlock:");
  else if (m->whole_domain)
    return;
  else
    local = strchr (element, ':') ? strchr (element, ':') + 1 : element;

  for (int i = 0; names[i]; i++)
    {
      if (g_str_equal (local, "owner"))
        {
          m->found = TRUE;
          if (g_str_equal (names[i], "boot-id"))
            set_str (&m->boot_id, values[i]);
          else if (g_str_equal (names[i], "host"))
            set_str (&m->host, values[i]);
          else if (g_str_equal (names[i], "pid"))
            m->pid = g_ascii_strtoll (values[i], NULL, 10);
          else if (g_str_equal (names[i], "start-time"))
            m->start_time = g_ascii_strtoll (values[i], NULL, 10);
        }
      else if (g_str_equal (local, "run-dir") && g_str_equal (names[i], "path"))
        g_ptr_array_add (m->run_dirs, g_strdup (values[i]));
    }
}

static void
owner_meta_clear (OwnerMeta *m)
{
  g_free (m->boot_id);
  g_free (m->host);
  g_ptr_array_unref (m->run_dirs);
}

static gboolean
parse_owner_meta (const char *xml, OwnerMeta *m)
{
  static const GMarkupParser parser = { .start_element = meta_start };
  g_autoptr (GMarkupParseContext) ctx = g_markup_parse_context_new (&parser, 0, m, NULL);

  return g_markup_parse_context_parse (ctx, xml, -1, NULL)
         && g_markup_parse_context_end_parse (ctx, NULL) && m->found;
}

char *
airlock_runtime_dir (GError **error)
{
  const char *xdg = g_getenv ("XDG_RUNTIME_DIR");
  g_autofree char *dir = NULL;
  struct stat st;

  if (xdg && *xdg && g_path_is_absolute (xdg))
    dir = g_build_filename (xdg, "airlock", NULL);
  else if (geteuid () == 0)
    dir = g_strdup ("/run/airlock");
  else
    dir = g_strdup_printf ("/tmp/airlock-%u", (unsigned) geteuid ());
  if (mkdir (dir, 0700) < 0 && errno != EEXIST)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                   "cannot create runtime directory '%s': %s", dir, g_strerror (errno));
      return NULL;
    }
  /* In a shared /tmp someone else may have made it first.  Search
   * permission for others is ours too: a run through a local daemon makes
   * it 0711 so QEMU (as libvirt-qemu) can reach its capture directory
   * (domain.c, prepare_network()); refusing that mode would refuse every later
   * run.  Nobody else may list it or create anything in it. */
  if (lstat (dir, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != geteuid ()
      || (st.st_mode & 0066))
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                   "runtime directory '%s' is not a private directory owned by us", dir);
      return NULL;
    }
  return g_steal_pointer (&dir);
}

/* Is @path a run directory of ours, in the cache or the runtime directory
 * (never remove anything else a domain's metadata happens to name)? */
static gboolean
is_our_run_dir (const char *cache_dir, const char *path)
{
  g_autofree char *runs = g_build_filename (cache_dir, "runs", NULL);
  g_autofree char *runtime = airlock_runtime_dir (NULL);
  g_autofree char *parent = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);

  return (g_str_equal (parent, runs) || g_strcmp0 (parent, runtime) == 0)
         && strlen (base) > 0 && base[0] != '.' && !strchr (base, '/');
}

static void
sweep_domains (AirlockConnection *c, GPtrArray *swept)
{
  virDomainPtr *domains = NULL;
  int n = virConnectListAllDomains (c->conn, &domains, 0);

  for (int i = 0; i < n; i++)
    {
      const char *name = virDomainGetName (domains[i]);
      g_autofree char *meta = NULL;
      OwnerMeta m = { .run_dirs = g_ptr_array_new_with_free_func (g_free) };

      if (name && g_str_has_prefix (name, AIRLOCK_DOMAIN_PREFIX))
        meta = virDomainGetMetadata (domains[i], VIR_DOMAIN_METADATA_ELEMENT, AIRLOCK_METADATA_NS, 0);
      if (meta && parse_owner_meta (meta, &m)
          && !airlock_owner_is_alive (m.boot_id, m.host, m.pid, m.start_time))
        {
          if (virDomainIsActive (domains[i]) == 1)
            (void) virDomainDestroy (domains[i]);
          if (virDomainIsPersistent (domains[i]) == 1)
            (void) virDomainUndefine (domains[i]);
          for (guint k = 0; k < m.run_dirs->len; k++)
            if (is_our_run_dir (c->cache_dir, m.run_dirs->pdata[k]))
              airlock_rm_rf (m.run_dirs->pdata[k]);
          if (swept)
            g_ptr_array_add (swept, g_strdup (name));
        }
      owner_meta_clear (&m);
      virDomainFree (domains[i]);
    }
  free (domains);
}

/* Run directories under @runs whose owner is gone and that no domain
 * claimed. */
static void
sweep_run_dirs_in (const char *runs)
{
  g_autoptr (GDir) dir = g_dir_open (runs, 0, NULL);
  const char *name;

  if (!dir)
    return;
  while ((name = g_dir_read_name (dir)))
    {
      g_autofree char *path = g_build_filename (runs, name, NULL);
      g_autofree char *owner_file = g_build_filename (path, "owner", NULL);
      g_autofree char *text = NULL;
      g_auto (GStrv) f = NULL;

      if (!g_file_get_contents (owner_file, &text, NULL, NULL))
        continue;
      f = g_strsplit (g_strstrip (text), " ", 4);
      if (g_strv_length (f) == 4
          && !airlock_owner_is_alive (f[0], f[1], g_ascii_strtoll (f[2], NULL, 10),
                                      g_ascii_strtoll (f[3], NULL, 10)))
        airlock_rm_rf (path);
    }
}

static void
sweep_run_dirs (const char *cache_dir)
{
  g_autofree char *runs = g_build_filename (cache_dir, "runs", NULL);
  g_autofree char *runtime = airlock_runtime_dir (NULL);

  sweep_run_dirs_in (runs);
  if (runtime)
    sweep_run_dirs_in (runtime);
}

/* The embedded driver reads <root>/etc/qemu.conf.  It must run without any
 * daemon (no virtlogd: QEMU's stdio goes to a file), and as root it would run
 * QEMU as libvirt-qemu, which cannot reach a cache under a private home
 * directory: run QEMU as the invoking user and leave file ownership alone.
 * No cgroups: airlock sets no CPU, memory or I/O limits for them to carry,
 * and building the domain's cgroups and moving each vCPU thread into its own
 * took 30 ms of every domain's creation here (0.14 -> 0.11 s on arm64, 0.10
 * -> 0.08 s on amd64).  The devices cgroup's allow-list goes with them,
 * which does not confine a QEMU running as root with root's capabilities
 * (as it does here): such a process can write any file.  QEMU still runs in
 * libvirt's private mount namespace, whose /dev holds only the nodes the
 * domain uses, under its seccomp sandbox.  For privilege separation use
 * qemu:///system. */
static gboolean
write_embed_config (const char *root, GError **error)
{
  g_autofree char *etc = g_build_filename (root, "etc", NULL);
  g_autofree char *conf = g_build_filename (etc, "qemu.conf", NULL);
  g_autoptr (GString) text = g_string_new ("# Written by airlock for its embedded libvirt driver.\n"
                                           "stdio_handler = \"file\"\n"
                                           "dynamic_ownership = 0\n"
                                           "remember_owner = 0\n"
                                           "cgroup_controllers = [ ]\n");

  if (geteuid () == 0)
    g_string_append_printf (text, "user = \"+%u\"\ngroup = \"+%u\"\n", (unsigned) geteuid (),
                            (unsigned) getegid ());
  if (g_mkdir_with_parents (etc, 0700) < 0)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_CONNECT,
                   "cannot create libvirt directory '%s': %s", etc, g_strerror (errno));
      return FALSE;
    }
  if (!g_file_set_contents (conf, text->str, -1, error))
    {
      g_prefix_error (error, "cannot write libvirt configuration '%s': ", conf);
      return FALSE;
    }
  return TRUE;
}

static int
take_slot (const char *cache_dir, char **ret_root, GError **error)
{
  for (int i = 0; i < N_EMBED_SLOTS; i++)
    {
      g_autofree char *root = g_strdup_printf ("%s/libvirt/slot-%d", cache_dir, i);
      g_autofree char *lock = g_build_filename (root, "airlock.lock", NULL);
      int fd;

      if (airlock_cache_mkdir (cache_dir, root, 0700) < 0)
        {
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_CONNECT,
                       "cannot create libvirt directory '%s': %s", root, g_strerror (errno));
          return -1;
        }
      fd = open (lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (fd < 0)
        {
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_CONNECT,
                       "cannot open lock file '%s': %s", lock, g_strerror (errno));
          return -1;
        }
      if (flock (fd, LOCK_EX | LOCK_NB) == 0)
        {
          if (!write_embed_config (root, error))
            {
              close (fd);
              return -1;
            }
          *ret_root = g_steal_pointer (&root);
          return fd;
        }
      close (fd);
    }
  g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_CONNECT,
               "all %d embedded libvirt slots under '%s/libvirt' are in use", N_EMBED_SLOTS,
               cache_dir);
  return -1;
}

/* Is @pid a QEMU running domain @name?  Guards against a recycled pid. */
static gboolean
is_qemu_of (pid_t pid, const char *name)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/cmdline", (int) pid);
  g_autofree char *cmd = NULL;
  g_autofree char *needle = g_strdup_printf ("guest=%s,", name);
  gsize len;

  if (pid <= 1 || !g_file_get_contents (path, &cmd, &len, NULL))
    return FALSE;
  for (gsize i = 0; i + 1 < len; i++)
    if (cmd[i] == '\0')
      cmd[i] = ' ';
  return strstr (cmd, needle) != NULL;
}

/* Our child (a QEMU the embedded driver daemonized while this process is a
 * child subreaper): its pid stays ours, even as a zombie, until we reap it. */
static gboolean
is_our_child (pid_t pid)
{
  g_autofree char *ppid = proc_stat_field (pid, 4);

  return ppid && g_ascii_strtoll (ppid, NULL, 10) == (gint64) getpid ();
}

/* Sweeps one domain's state in an idle slot's <root>/run/qemu without
 * libvirt: a process can hold only one embedded root, and ours is open. */
static void
sweep_state_file (const char *cache_dir, const char *state_dir, const char *file,
                  GPtrArray *swept)
{
  g_autofree char *xml_path = g_build_filename (state_dir, file, NULL);
  g_autofree char *name = g_strndup (file, strlen (file) - strlen (".xml"));
  g_autofree char *pid_path = g_strdup_printf ("%s/%s.pid", state_dir, name);
  g_autofree char *xml = NULL;
  g_autofree char *pid_text = NULL;
  OwnerMeta m = { .run_dirs = g_ptr_array_new_with_free_func (g_free), .whole_domain = TRUE };
  pid_t pid = 0;

  if (!g_file_get_contents (xml_path, &xml, NULL, NULL) || !parse_owner_meta (xml, &m)
      || airlock_owner_is_alive (m.boot_id, m.host, m.pid, m.start_time))
    {
      owner_meta_clear (&m);
      return;
    }
  if (g_file_get_contents (pid_path, &pid_text, NULL, NULL))
    pid = (pid_t) g_ascii_strtoll (pid_text, NULL, 10);
  if (pid > 1 && is_qemu_of (pid, name))
    {
      (void) kill (pid, SIGKILL);
      for (int i = 0; i < 50 && kill (pid, 0) == 0; i++)
        g_usleep (20 * 1000);
    }
  (void) unlink (xml_path);
  (void) unlink (pid_path);
  for (guint k = 0; k < m.run_dirs->len; k++)
    if (is_our_run_dir (cache_dir, m.run_dirs->pdata[k]))
      airlock_rm_rf (m.run_dirs->pdata[k]);
  if (swept)
    g_ptr_array_add (swept, g_steal_pointer (&name));
  owner_meta_clear (&m);
}

/* A slot nobody holds that still has domain state is what a crashed run
 * left behind. */
static void
sweep_idle_slots (const char *cache_dir, GPtrArray *swept)
{
  for (int i = 0; i < N_EMBED_SLOTS; i++)
    {
      g_autofree char *root = g_strdup_printf ("%s/libvirt/slot-%d", cache_dir, i);
      g_autofree char *lock = g_build_filename (root, "airlock.lock", NULL);
      g_autofree char *state = g_build_filename (root, "run", "qemu", NULL);
      g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (GDir) dir = NULL;
      const char *name;
      int fd;

      dir = g_dir_open (state, 0, NULL);
      while (dir && (name = g_dir_read_name (dir)))
        if (g_str_has_prefix (name, AIRLOCK_DOMAIN_PREFIX) && g_str_has_suffix (name, ".xml"))
          g_ptr_array_add (files, g_strdup (name));
      if (files->len == 0)
        continue;
      fd = open (lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (fd < 0)
        continue;
      /* Held: a live process owns that slot and its domains. */
      if (flock (fd, LOCK_EX | LOCK_NB) == 0)
        for (guint k = 0; k < files->len; k++)
          sweep_state_file (cache_dir, state, files->pdata[k], swept);
      close (fd);
    }
}

G_LOCK_DEFINE_STATIC (embedded);
static GHashTable *embedded_by_cache; /* cache dir → AirlockConnection, kept for the process */

static AirlockConnection *
open_embedded (const char *cache_dir, GPtrArray *swept, GError **error)
{
  AirlockConnection *c;
  g_autofree char *root = NULL;

  G_LOCK (embedded);
  if (!embedded_by_cache)
    embedded_by_cache = g_hash_table_new (g_str_hash, g_str_equal);
  c = g_hash_table_lookup (embedded_by_cache, cache_dir);
  if (c)
    {
      c->refs++;
      G_UNLOCK (embedded);
      /* A run that crashed since we opened may have used another slot. */
      sweep_idle_slots (cache_dir, swept);
      sweep_domains (c, swept);
      sweep_run_dirs (cache_dir);
      return c;
    }

  c = g_new0 (AirlockConnection, 1);
  c->refs = 1;
  c->embedded = TRUE;
  c->cache_dir = g_strdup (cache_dir);
  sweep_idle_slots (cache_dir, swept);
  c->slot_lock_fd = take_slot (cache_dir, &root, error);
  if (c->slot_lock_fd < 0)
    goto fail;
  c->uri = g_strdup_printf ("qemu:///embed?root=%s", root);
  c->embed_root = g_strdup (root);
  c->conn = virConnectOpen (c->uri);
  if (!c->conn)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_CONNECT,
                   "cannot open libvirt connection '%s': %s", c->uri, airlock_vir_last_error ());
      goto fail;
    }
  /* One reference belongs to the table: the connection lives as long as the
   * process, holding its slot. */
  c->refs++;
  g_hash_table_insert (embedded_by_cache, c->cache_dir, c);
  G_UNLOCK (embedded);
  sweep_domains (c, swept);
  sweep_run_dirs (cache_dir);
  return c;

fail:
  G_UNLOCK (embedded);
  c->refs = 1;
  airlock_connection_free (c);
  return NULL;
}

AirlockConnection *
airlock_connection_open (const char *uri, const char *cache_dir, GPtrArray *swept, GError **error)
{
  g_autoptr (AirlockConnection) c = NULL;
  const char *env = g_getenv ("AIRLOCK_CONNECT");
  int subreaper = 0;

  init_libvirt (cache_dir);
  /* A process that adopts its QEMUs (airlock_vm_adopt_qemu()) reaps them
   * from the first connection on, not from main(): a command that ends
   * on a usage error starts no thread (one being created at exit was a
   * LeakSanitizer report, at random, in the ASan suite). */
  if (prctl (PR_GET_CHILD_SUBREAPER, &subreaper, 0, 0, 0) == 0 && subreaper)
    airlock_connection_start_reaper ();

  if (!uri && env && *env)
    {
      if (strpbrk (env, " \t\n"))
        {
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_CONNECT,
                       "AIRLOCK_CONNECT lists several hypervisors ('%s'): only a run or a gate "
                       "spreads over a pool; give this one a single URI (--connect)", env);
          return NULL;
        }
      uri = env;
    }
  if (!uri || g_str_equal (uri, AIRLOCK_URI_EMBEDDED))
    return open_embedded (cache_dir, swept, error);

  c = g_new0 (AirlockConnection, 1);
  c->refs = 1;
  c->slot_lock_fd = -1;
  c->cache_dir = g_strdup (cache_dir);
  c->uri = g_strdup (uri);
  c->embedded = g_str_has_prefix (uri, "qemu:///embed");
  c->remote = !g_str_has_prefix (uri, "qemu:///") && !g_str_has_prefix (uri, "qemu+unix:///");
  c->conn = virConnectOpen (c->uri);
  if (!c->conn)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_CONNECT,
                   "cannot open libvirt connection '%s': %s", c->uri, airlock_vir_last_error ());
      return NULL;
    }
  sweep_domains (c, swept);
  sweep_run_dirs (cache_dir);
  return g_steal_pointer (&c);
}

void
airlock_connection_free (AirlockConnection *c)
{
  if (!c)
    return;
  G_LOCK (embedded);
  if (--c->refs > 0)
    {
      G_UNLOCK (embedded);
      return;
    }
  G_UNLOCK (embedded);
  if (c->conn)
    virConnectClose (c->conn);
  if (c->slot_lock_fd >= 0)
    close (c->slot_lock_fd);
  g_free (c->uri);
  g_free (c->cache_dir);
  g_free (c->embed_root);
  g_free (c);
}

pid_t
airlock_connection_qemu_pid (AirlockConnection *c, const char *name, gboolean *ret_is_child)
{
  g_autofree char *pid_path = NULL;
  g_autofree char *text = NULL;
  pid_t pid;

  *ret_is_child = FALSE;
  if (!c->embed_root)
    return 0;
  pid_path = g_strdup_printf ("%s/run/qemu/%s.pid", c->embed_root, name);
  if (!g_file_get_contents (pid_path, &text, NULL, NULL))
    return 0;
  pid = (pid_t) g_ascii_strtoll (text, NULL, 10);
  if (!is_qemu_of (pid, name))
    return 0;
  *ret_is_child = is_our_child (pid);
  return pid;
}

gboolean
airlock_connection_kill_qemu (AirlockConnection *c, const char *name)
{
  gboolean is_child;
  pid_t pid = airlock_connection_qemu_pid (c, name, &is_child);

  return pid > 0 && kill (pid, SIGKILL) == 0;
}

/* QEMUs that a run reaps itself (airlock_connection_claim_qemu()): the
 * reaper thread leaves them alone, so no pid a run holds is reaped, and
 * perhaps reused, behind its back. */
G_LOCK_DEFINE_STATIC (adopted);
static GHashTable *claimed;

void
airlock_connection_claim_qemu (pid_t pid)
{
  G_LOCK (adopted);
  if (!claimed)
    claimed = g_hash_table_new (NULL, NULL);
  g_hash_table_add (claimed, GINT_TO_POINTER (pid));
  G_UNLOCK (adopted);
}

gboolean
airlock_connection_reap_qemu (pid_t pid)
{
  g_autofree char *state = proc_stat_field (pid, 3);
  gboolean alive = state && !g_str_equal (state, "Z");
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  /* Claimed, so still our child or our zombie: the pid cannot have been
   * reused. */
  int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);

  if (alive)
    (void) kill (pid, SIGKILL);
  /* Reap it the moment it dies.  libvirt, seeing QEMU's monitor close,
   * asks kill (pid, …) whether QEMU is gone, and a zombie still answers:
   * it then sleeps 200 ms before it asks again (virProcessKillPainfully).
   * The monitor closes just before the process becomes a zombie, so this is
   * a race libvirt still mostly wins: a pidfd, readable from the moment the
   * process exits (Linux 5.3), gives us the best start, and teardown took
   * 0.01 s instead of 0.21 s in 7 of 24 runs here, against 1 of 12 with a
   * 2 ms poll alone (bench/boot).  Without a pidfd, poll. */
  if (pidfd >= 0)
    {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      gint64 left;

      while ((left = deadline - g_get_monotonic_time ()) > 0
             && poll (&p, 1, (int) (left / 1000) + 1) < 0 && errno == EINTR)
        ;
      close (pidfd);
    }
  while (waitpid (pid, NULL, WNOHANG) == 0 && g_get_monotonic_time () < deadline)
    g_usleep (2 * 1000);
  G_LOCK (adopted);
  g_hash_table_remove (claimed, GINT_TO_POINTER (pid));
  G_UNLOCK (adopted);
  return alive;
}

/* The reaper thread runs while libvirt forks in other threads, and a child
 * of fork() in a threaded process may only use what no other thread could
 * have held at the fork.  libvirt's child allocates before it execs; glibc's
 * malloc takes its own locks around fork(), but a replaced allocator need
 * not (ASan's does not: a child forked while this thread was refilling its
 * cache hung for good).  So the reaper allocates nothing: fixed buffers,
 * raw directory reads, no GLib beyond the lock of the claimed set. */

/* Reads /proc/self/<...> or /proc/<pid>/stat into @buf (NUL-terminated).
 * Returns the length, or -1. */
static ssize_t
read_small_file (const char *path, char *buf, size_t size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0)
    return -1;
  do
    n = read (fd, buf, size - 1);
  while (n < 0 && errno == EINTR);
  close (fd);
  if (n < 0)
    return -1;
  buf[n] = '\0';
  return n;
}

/* A zombie child of ours that libvirt daemonized: a qemu-system process in
 * another session (a daemon calls setsid(); a QEMU this program spawned
 * itself stays in ours, and is left to whoever waits for it). */
static gboolean
is_adopted_qemu_zombie (pid_t pid, pid_t our_session)
{
  char path[64];
  char stat[512];
  const char *p;
  gint64 session = 0;
  char state;

  (void) snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  /* "pid (comm) state ppid pgrp session …": comm may hold spaces and ')'. */
  if (read_small_file (path, stat, sizeof stat) < 0 || !strstr (stat, " (qemu-system")
      || !(p = strrchr (stat, ')')) || p[1] != ' ' || !p[2])
    return FALSE;
  state = p[2];
  p += 3;
  /* Past ppid and pgrp to session. */
  for (int field = 0; field < 3; field++)
    {
      if (*p != ' ')
        return FALSE;
      p++;
      if (field < 2)
        while (*p && *p != ' ')
          p++;
    }
  while (g_ascii_isdigit (*p))
    session = session * 10 + (*p++ - '0');
  return state == 'Z' && (*p == ' ' || !*p) && session != (gint64) our_session;
}

/* Reaps @pid when it is an adopted QEMU zombie no run claims. */
static void
reap_if_unclaimed (pid_t pid, pid_t our_session)
{
  gboolean mine;

  if (pid <= 1 || !is_adopted_qemu_zombie (pid, our_session))
    return;
  G_LOCK (adopted);
  mine = claimed && g_hash_table_contains (claimed, GINT_TO_POINTER (pid));
  G_UNLOCK (adopted);
  if (!mine)
    (void) waitpid (pid, NULL, WNOHANG);
}

/* Reaps the unclaimed adopted QEMU zombies among the pids a
 * /proc/self/task/TID/children file lists ("PID PID … "). */
static void
reap_adopted_children (const char *path, pid_t our_session)
{
  char text[4096];
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  gint64 pid = -1;
  ssize_t n;

  if (fd < 0)
    return;
  /* In chunks: the list may be longer than the buffer, and a number may
   * span two reads. */
  while ((n = read (fd, text, sizeof text)) > 0 || (n < 0 && errno == EINTR))
    for (ssize_t i = 0; i < n; i++)
      {
        if (g_ascii_isdigit (text[i]))
          pid = pid < 0 ? text[i] - '0' : MIN (pid * 10 + (text[i] - '0'), (gint64) G_MAXINT);
        else if (pid >= 0)
          {
            reap_if_unclaimed ((pid_t) pid, our_session);
            pid = -1;
          }
      }
  if (pid >= 0)
    reap_if_unclaimed ((pid_t) pid, our_session);
  close (fd);
}

/* struct linux_dirent64, as getdents64() returns it (opendir() allocates). */
struct dirent64_record {
  guint64 ino;
  gint64 off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

/* Reaps the daemonized QEMUs no run claims: libvirt's capability probes
 * (QEMU -daemonize, killed when done) and any run's QEMU that outlived its
 * claim.  libvirt waits for each killed process to vanish, so an unreaped
 * one would cost it its whole kill timeout.  Children hang off the thread
 * that forked them, so every thread's list is read. */
static gpointer
reaper_thread (gpointer data)
{
  pid_t our_session = getsid (0);

  for (;;)
    {
      int dir = open ("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      char entries[4096] __attribute__ ((aligned (8)));
      long n;

      while (dir >= 0 && (n = syscall (SYS_getdents64, dir, entries, sizeof entries)) > 0)
        for (long off = 0; off < n;)
          {
            const struct dirent64_record *e = (const void *) (entries + off);
            char path[96];

            off += e->reclen;
            if (!g_ascii_isdigit (e->name[0]))
              continue;
            (void) snprintf (path, sizeof path, "/proc/self/task/%s/children", e->name);
            reap_adopted_children (path, our_session);
          }
      if (dir >= 0)
        close (dir);
      g_usleep (50 * 1000);
    }
  return NULL;
}

void
airlock_connection_start_reaper (void)
{
  static gsize started;

  if (g_once_init_enter (&started))
    {
      g_thread_unref (g_thread_new ("airlock-reaper", reaper_thread, NULL));
      g_once_init_leave (&started, 1);
    }
}
