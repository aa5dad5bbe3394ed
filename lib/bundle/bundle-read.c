/* A bundle read as recorded, for `airlock show` (bundle-read.h).  Nothing
 * here checks a digest or re-derives a file: that is bundle-verify.c.  What
 * is here is reading files someone else may have written: bounded, without
 * following symlinks, every JSON value type-checked, every string made safe
 * to print. */
#include "config.h"

#include "bundle/bundle-read.h"
#include "bounds-private.h"
#include "bundle/bundle-json-private.h"
#include "bundle/bundle.h"

#include "json-bounded-private.h"
#include "evidence/frame-private.h"
#include "fsutil-private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_MARKER_MAX ((gsize) 64 * 1024)
/* The console tail is read from the last bytes only: 40 lines of a kernel
 * log fit many times over. */
#define READ_CONSOLE_TAIL ((gsize) 64 * 1024)

static void
call_free (gpointer p)
{
  AirlockBundleCall *c = p;

  g_free (c->exe);
  g_free (c->syscall);
  g_free (c->socket);
  g_free (c->destination);
  g_strfreev (c->dns_names);
  g_free (c->action);
  g_free (c->deny_reason);
  g_free (c->outcome);
  g_free (c);
}

static void
process_free (gpointer p)
{
  AirlockBundleProcess *proc = p;

  g_free (proc->path);
  g_strfreev (proc->argv);
  g_free (proc->caller);
  g_free (proc);
}

static void
control_free (gpointer p)
{
  AirlockBundleControl *c = p;

  g_free (c->name);
  g_free (c->key);
  g_free (c);
}

void
airlock_bundle_view_free (AirlockBundleView *v)
{
  if (!v)
    return;
  g_free (v->dir);
  g_free (v->arch);
  g_free (v->incomplete);
  g_ptr_array_unref (v->missing);
  g_ptr_array_unref (v->problems);
  g_ptr_array_unref (v->present);
  g_free (v->reference);
  g_free (v->index_digest);
  g_free (v->manifest_digest);
  g_free (v->config_digest);
  g_free (v->kernel_release);
  g_free (v->kernel_sha256);
  g_free (v->initramfs_sha256);
  g_free (v->supervisor_sha256);
  g_free (v->supervisor_build_id);
  g_free (v->supervisor_recorder);
  g_free (v->accel);
  g_free (v->incomplete_reason);
  g_free (v->pcap_error);
  g_free (v->started);
  g_free (v->finished);
  g_free (v->verdict);
  g_ptr_array_unref (v->reasons);
  g_ptr_array_unref (v->unattributed);
  g_ptr_array_unref (v->controls);
  g_ptr_array_unref (v->calls);
  g_ptr_array_unref (v->processes);
  g_free (v->workload_exit);
  airlock_network_report_free (v->network);
  if (v->sinkhole_log)
    airlock_sinkhole_log_free (v->sinkhole_log);
  g_free (v->sinkhole_error);
  g_ptr_array_unref (v->console_tail);
  g_free (v);
}

/* ---- files ---- */

/* airlock_read_at_bounded () for show: NULL with @ret_why NULL when the
 * file does not exist (listed as missing, not as a problem). */
static GBytes *
read_at (int dirfd, const char *name, gsize max, gboolean tail, guint64 *ret_size, char **ret_why)
{
  GBytes *bytes = airlock_read_at_bounded (dirfd, name, max, tail, "show", ret_size, ret_why);

  if (!bytes && errno == ENOENT)
    g_clear_pointer (ret_why, g_free);
  return bytes;
}

GBytes *
airlock_bundle_read_file (const char *dir, const char *name, GError **error)
{
  gsize max = g_str_equal (name, AIRLOCK_BUNDLE_NETWORK_FILE) ? AIRLOCK_SINKHOLE_LOG_MAX
                                                             : AIRLOCK_BOUND_DERIVED_FILE;
  g_autofree char *why = NULL;
  g_autofree char *path = g_build_filename (dir, name, NULL);
  int dirfd;
  GBytes *bytes;

  if (!*name || strchr (name, '/') || g_str_equal (name, ".") || g_str_equal (name, ".."))
    {
      g_set_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_INVALID,
                   "'%s' is not the name of a bundle's file", name);
      return NULL;
    }
  dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    {
      g_set_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_INVALID,
                   "cannot open the bundle directory '%s': %s", dir, g_strerror (errno));
      return NULL;
    }
  bytes = airlock_read_at_bounded (dirfd, name, max, FALSE, "airlock", NULL, &why);
  close (dirfd);
  if (!bytes)
    g_set_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_INVALID, "'%s' %s", path, why);
  return bytes;
}

static void G_GNUC_PRINTF (3, 4)
problem (AirlockBundleView *v, const char *file, const char *fmt, ...)
{
  g_autofree char *why = NULL;
  va_list ap;

  va_start (ap, fmt);
  why = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_ptr_array_add (v->problems, g_strdup_printf ("%s: %s", file, why));
}

/* Reads @name; records it as missing or a problem when it cannot be. */
static GBytes *
read_or_note (AirlockBundleView *v, int dirfd, const char *name, gsize max)
{
  g_autofree char *why = NULL;
  GBytes *bytes = read_at (dirfd, name, max, FALSE, NULL, &why);

  if (!bytes && why)
    problem (v, name, "%s", why);
  else if (!bytes)
    g_ptr_array_add (v->missing, g_strdup (name));
  return bytes;
}

/* @bytes as a JSON object, or NULL with a problem recorded. */
static JsonNode *
parse_object (AirlockBundleView *v, const char *name, GBytes *bytes)
{
  g_autoptr (GError) error = NULL;
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);
  g_autoptr (JsonNode) root = airlock_json_parse_bounded (data, len, NULL, &error);

  if (!root)
    {
      g_autofree char *why = airlock_bundle_safe_text (error->message);

      problem (v, name, "%s", why);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      problem (v, name, "is not a JSON object");
      return NULL;
    }
  return g_steal_pointer (&root);
}

/* ---- type-checked members ---- */

/* A safe copy of a string member, or NULL. */
static char *
text_member (JsonObject *o, const char *name)
{
  return airlock_bundle_safe_text (airlock_json_get_string (o, name));
}

static gboolean
int_member (JsonObject *o, const char *name, gint64 min, gint64 max, gint64 *ret)
{
  gint64 v;

  if (!airlock_json_get_int (o, name, &v) || v < min || v > max)
    return FALSE;
  *ret = v;
  return TRUE;
}

/* The strings of an array member (others skipped), safe; NULL without it. */
static GStrv
strv_member (JsonObject *o, const char *name)
{
  return airlock_json_get_strv (o, name, airlock_bundle_safe_text);
}

/* ---- manifest.json ---- */

static void
read_manifest (AirlockBundleView *v, JsonObject *m)
{
  JsonObject *inputs = airlock_json_get_object (m, "inputs");
  JsonObject *image = airlock_json_get_object (inputs, "image");
  JsonObject *kernel = airlock_json_get_object (inputs, "kernel");
  JsonObject *initramfs = airlock_json_get_object (inputs, "initramfs");
  JsonObject *supervisor = airlock_json_get_object (inputs, "supervisor");
  JsonObject *run = airlock_json_get_object (m, "run");

  v->arch = text_member (m, "arch");
  v->reference = text_member (image, "reference");
  v->index_digest = text_member (image, "index");
  v->manifest_digest = text_member (image, "manifest");
  v->config_digest = text_member (image, "config");
  v->kernel_release = text_member (kernel, "release");
  v->kernel_sha256 = text_member (kernel, "sha256");
  v->initramfs_sha256 = text_member (initramfs, "sha256");
  v->supervisor_sha256 = text_member (supervisor, "sha256");
  v->supervisor_build_id = text_member (supervisor, "build_id");
  v->supervisor_recorder = text_member (supervisor, "recorder");
  v->accel = text_member (run, "accel");
  v->has_complete = airlock_json_get_bool (run, "complete", &v->complete);
  v->incomplete_reason = text_member (run, "reason");
  v->pcap_error = text_member (run, "pcap_error");
  v->sinkhole_error = text_member (run, "sinkhole_error");
  v->started = text_member (run, "started");
  v->finished = text_member (run, "finished");
  if (!run)
    problem (v, "manifest.json", "has no run record");
}

/* ---- verdict.json ---- */

static void
read_verdict (AirlockBundleView *v, JsonObject *o)
{
  JsonArray *reasons = airlock_json_get_array (o, "reasons");
  JsonObject *controls = airlock_json_get_object (o, "controls");
  JsonArray *each = airlock_json_get_array (controls, "each");
  gint64 n;

  v->verdict = text_member (o, "verdict");
  for (guint i = 0; reasons && i < json_array_get_length (reasons); i++)
    {
      JsonNode *r = json_array_get_element (reasons, i);

      if (!JSON_NODE_HOLDS_VALUE (r) || json_node_get_value_type (r) != G_TYPE_STRING)
        continue;
      g_ptr_array_add (v->reasons, airlock_bundle_safe_text (json_node_get_string (r)));
      /* What lib/gate/verdict.c writes for a captured flow no record
       * explains: taken as recorded, not recomputed from net.pcap
       * (`airlock verify` recomputes it). */
      if (g_str_has_prefix (json_node_get_string (r), "unattributed egress "))
        g_ptr_array_add (v->unattributed, airlock_bundle_safe_text (json_node_get_string (r)));
    }
  if (controls)
    {
      v->has_controls = TRUE;
      if (int_member (controls, "observed", 0, G_MAXUINT32, &n))
        v->controls_observed = (guint) n;
      if (int_member (controls, "total", 0, G_MAXUINT32, &n))
        v->controls_total = (guint) n;
    }
  for (guint i = 0; each && i < json_array_get_length (each); i++)
    {
      JsonNode *node = json_array_get_element (each, i);
      JsonObject *c = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
      AirlockBundleControl *control;

      if (!c)
        continue;
      control = g_new0 (AirlockBundleControl, 1);
      control->name = text_member (c, "name");
      control->key = text_member (c, "key");
      airlock_json_get_bool (c, "supervisor", &control->supervisor);
      airlock_json_get_bool (c, "capture", &control->capture);
      g_ptr_array_add (v->controls, control);
    }
}

/* ---- events.jsonl ---- */

/* The IP address in a destination as airlock_sockaddr_to_string() writes
 * it: "192.0.2.1:80", "[2001:db8::1%2]:443", "[::ffff:192.0.2.1]:53
 * (v4-mapped 192.0.2.1)".  0 for anything else (unix:…, netlink:…). */
static int
parse_ip (const char *text, guint8 out[16])
{
  g_autofree char *host = NULL;

  if (text[0] == '[')
    {
      gsize n = strcspn (text + 1, "%]");

      host = g_strndup (text + 1, n);
      return inet_pton (AF_INET6, host, out) == 1 ? AF_INET6 : 0;
    }
  if (strchr (text, ':'))
    {
      host = g_strndup (text, (gsize) (strrchr (text, ':') - text));
      return inet_pton (AF_INET, host, out) == 1 ? AF_INET : 0;
    }
  return 0;
}

/* The destination `airlock run` shows for the event, from its JSON: the
 * address it passes (addr), or the connected peer when it passes none or
 * the call ignores it ("(connected peer)": a TCP send) — as
 * airlock_event_get_destination() decides.  NULL with @ret_undecodable
 * when an address was given but does not decode. */
static JsonObject *
destination_of (JsonObject *ev, gboolean *ret_undecodable)
{
  JsonObject *addr = airlock_json_get_object (ev, "addr");
  JsonObject *peer = airlock_json_get_object (ev, "peer");
  const char *addr_text = airlock_json_get_string (addr, "text");
  const char *peer_text = airlock_json_get_string (peer, "text");

  *ret_undecodable = (addr && !addr_text) || (peer && !peer_text);
  if (addr && !addr_text)
    return NULL;
  if (addr_text && !g_str_equal (addr_text, "(connected peer)"))
    return addr;
  return peer_text ? peer : NULL;
}

static AirlockBundleCall *
call_new (JsonObject *ev, guint64 seq)
{
  AirlockBundleCall *c = g_new0 (AirlockBundleCall, 1);
  const char *syscall = airlock_json_get_string (ev, "syscall");
  const char *abi = airlock_json_get_string (ev, "abi");
  gboolean undecodable = FALSE;
  JsonObject *dest = destination_of (ev, &undecodable);
  JsonArray *dns = airlock_json_get_array (ev, "dns");
  GPtrArray *names = g_ptr_array_new ();
  gint64 n;

  c->seq = seq;
  c->exe = text_member (ev, "exe");
  if (int_member (ev, "nspid", 0, G_MAXUINT32, &n) || int_member (ev, "pid", 0, G_MAXUINT32, &n))
    {
      c->has_pid = TRUE;
      c->pid = (guint32) n;
    }
  /* Foreign: any ABI but the arch's own (event.h foreign_abi). */
  if (syscall && abi && !g_str_equal (abi, "x86_64") && !g_str_equal (abi, "aarch64"))
    {
      g_autofree char *joined = g_strdup_printf ("%s:%s", abi, syscall);

      c->syscall = airlock_bundle_safe_text (joined);
    }
  else
    c->syscall = airlock_bundle_safe_text (syscall ? syscall : "?");
  c->socket = text_member (ev, "socket");
  if (dest)
    {
      c->destination = text_member (dest, "text");
      if (int_member (dest, "port", 0, G_MAXUINT16, &n))
        {
          c->has_port = TRUE;
          c->port = (guint16) n;
        }
      c->dest_family = parse_ip (c->destination, c->dest_address);
    }
  else if (undecodable)
    c->destination = g_strdup ("? (does not decode)");
  for (guint i = 0; dns && i < json_array_get_length (dns); i++)
    {
      JsonNode *q = json_array_get_element (dns, i);
      const char *name = JSON_NODE_HOLDS_OBJECT (q) ? airlock_json_get_string (json_node_get_object (q), "name")
                                                    : NULL;

      /* The other entries are a malformed message's problem and reason. */
      if (name)
        g_ptr_array_add (names, airlock_bundle_safe_text (name));
    }
  g_ptr_array_add (names, NULL);
  c->dns_names = (GStrv) g_ptr_array_free (names, FALSE);
  c->action = text_member (ev, "action");
  c->deny_reason = g_strcmp0 (c->action, "deny") == 0 ? text_member (ev, "reason") : NULL;
  c->outcome = text_member (ev, "outcome");
  /* As the verdict counts them (lib/gate/verdict.c): a bind's address is
   * local; a clone3 denial is every glibc thread start. */
  c->attempt = (c->destination && g_strcmp0 (syscall, "bind") != 0)
               || (c->deny_reason && !g_str_equal (c->deny_reason, "clone3"));
  return c;
}

static AirlockBundleProcess *
process_new (JsonObject *ev, guint64 seq)
{
  AirlockBundleProcess *p = g_new0 (AirlockBundleProcess, 1);
  gint64 n;

  p->seq = seq;
  if ((p->has_nspid = int_member (ev, "nspid", 0, G_MAXUINT32, &n)))
    p->nspid = (guint32) n;
  if ((p->has_pid = int_member (ev, "pid", 0, G_MAXUINT32, &n)))
    p->pid = (guint32) n;
  if ((p->has_ppid = int_member (ev, "ppid", 0, G_MAXUINT32, &n)))
    p->ppid = (guint32) n;
  p->path = text_member (ev, "path");
  p->argv = strv_member (ev, "exec-argv");
  p->caller = text_member (ev, "exe");
  return p;
}

static void
read_events (AirlockBundleView *v, GBytes *text)
{
  gsize len;
  const char *data = g_bytes_get_data (text, &len);
  gsize start = 0;
  guint line = 0, bad = 0, first_bad = 0;

  v->has_events = TRUE;
  while (start < len)
    {
      const char *nl = memchr (data + start, '\n', len - start);
      gsize end = nl ? (gsize) (nl - data) : len;
      g_autoptr (JsonNode) root = NULL;
      JsonObject *ev;
      const char *kind, *phase, *syscall;
      gint64 seq = 0;

      line++;
      if (end == start)
        {
          start = end + 1;
          continue;
        }
      root = airlock_json_parse_bounded (data + start, end - start, NULL, NULL);
      if (!root || !JSON_NODE_HOLDS_OBJECT (root))
        {
          if (bad++ == 0)
            first_bad = line;
          start = end + 1;
          continue;
        }
      start = end + 1;
      ev = json_node_get_object (root);
      kind = airlock_json_get_string (ev, "kind");
      phase = airlock_json_get_string (ev, "phase");
      int_member (ev, "seq", 0, G_MAXINT64, &seq);
      /* The negative controls are ours, not the workload's: verdict.json
       * says how each went. */
      if (g_strcmp0 (phase, "workload") != 0)
        continue;
      if (g_strcmp0 (kind, "workload-exit") == 0)
        {
          g_free (v->workload_exit);
          v->workload_exit = text_member (ev, "exit");
          continue;
        }
      if (g_strcmp0 (kind, "syscall") != 0)
        continue;
      syscall = airlock_json_get_string (ev, "syscall");
      if (g_strcmp0 (syscall, "execve") == 0 || g_strcmp0 (syscall, "execveat") == 0)
        g_ptr_array_add (v->processes, process_new (ev, (guint64) seq));
      else
        g_ptr_array_add (v->calls, call_new (ev, (guint64) seq));
    }
  if (bad)
    problem (v, "events.jsonl", "%u line%s not a JSON object (the first: line %u); shown without %s",
             bad, bad == 1 ? " is" : "s are", first_bad, bad == 1 ? "it" : "them");
}

/* ---- network.jsonl ---- */

static void
read_network (AirlockBundleView *v, int dirfd)
{
  g_autofree char *why = NULL;
  g_autoptr (GBytes) bytes = read_at (dirfd, AIRLOCK_BUNDLE_NETWORK_FILE, AIRLOCK_SINKHOLE_LOG_MAX,
                                      FALSE, NULL, &why);
  g_autoptr (AirlockSinkholeLog) log = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) controls = g_ptr_array_new ();

  if (!bytes)
    {
      if (why)
        problem (v, AIRLOCK_BUNDLE_NETWORK_FILE, "%s", why);
      return;
    }
  log = airlock_sinkhole_log_new_from_bytes (bytes, &error);
  if (!log)
    {
      g_autofree char *message = airlock_bundle_safe_text (error->message);

      problem (v, AIRLOCK_BUNDLE_NETWORK_FILE, "%s", message);
      return;
    }
  for (guint i = 0; i < v->controls->len; i++)
    g_ptr_array_add (controls, ((AirlockBundleControl *) v->controls->pdata[i])->key);
  v->network = airlock_network_report_new (log, controls);
  v->sinkhole_log = g_steal_pointer (&log);
}

/* ---- console.log ---- */

static void
read_console_tail (AirlockBundleView *v, int dirfd, guint max_lines)
{
  g_autofree char *why = NULL;
  g_autoptr (GBytes) tail = read_at (dirfd, "console.log", READ_CONSOLE_TAIL, TRUE,
                                     &v->console_size, &why);
  g_autoptr (GPtrArray) lines = g_ptr_array_new_with_free_func (g_free);
  gsize len, start = 0;
  const char *data;

  if (!tail)
    {
      if (why)
        problem (v, "console.log", "%s", why);
      else
        g_ptr_array_add (v->missing, g_strdup ("console.log"));
      return;
    }
  data = g_bytes_get_data (tail, &len);
  /* Started in the middle of the file: the first line is a fragment. */
  if (v->console_size > len)
    {
      const char *nl = memchr (data, '\n', len);

      start = nl ? (gsize) (nl - data) + 1 : len;
    }
  while (start < len)
    {
      const char *nl = memchr (data + start, '\n', len - start);
      gsize end = nl ? (gsize) (nl - data) : len;
      gsize stop = end;

      /* The serial console ends lines with "\r\n". */
      while (stop > start && data[stop - 1] == '\r')
        stop--;
      g_ptr_array_add (lines, airlock_evidence_escape_bytes ((const guint8 *) data + start,
                                                             stop - start));
      start = end + 1;
    }
  for (guint i = lines->len > max_lines ? lines->len - max_lines : 0; i < lines->len; i++)
    g_ptr_array_add (v->console_tail, g_steal_pointer (&lines->pdata[i]));
}

/* ---- the bundle ---- */

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static void
list_present (AirlockBundleView *v, const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d)))
    g_ptr_array_add (v->present, airlock_bundle_safe_text (name));
  g_ptr_array_sort (v->present, compare_names);
}

static gboolean
is_present (AirlockBundleView *v, const char *name)
{
  for (guint i = 0; i < v->present->len; i++)
    if (g_str_equal (v->present->pdata[i], name))
      return TRUE;
  return FALSE;
}

AirlockBundleView *
airlock_bundle_read (const char *dir, guint console_lines)
{
  AirlockBundleView *v = g_new0 (AirlockBundleView, 1);
  g_autoptr (GBytes) marker = NULL, manifest = NULL, verdict = NULL, events = NULL;
  g_autoptr (JsonNode) manifest_root = NULL, verdict_root = NULL;
  g_autofree char *why = NULL;
  struct stat st;
  int dirfd;

  v->dir = g_strdup (dir);
  v->missing = g_ptr_array_new_with_free_func (g_free);
  v->problems = g_ptr_array_new_with_free_func (g_free);
  v->present = g_ptr_array_new_with_free_func (g_free);
  v->reasons = g_ptr_array_new_with_free_func (g_free);
  v->unattributed = g_ptr_array_new_with_free_func (g_free);
  v->controls = g_ptr_array_new_with_free_func (control_free);
  v->calls = g_ptr_array_new_with_free_func (call_free);
  v->processes = g_ptr_array_new_with_free_func (process_free);
  v->console_tail = g_ptr_array_new_with_free_func (g_free);

  dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    {
      problem (v, ".", "cannot open the bundle directory: %s", g_strerror (errno));
      return v;
    }
  list_present (v, dir);

  marker = read_at (dirfd, AIRLOCK_BUNDLE_INCOMPLETE, READ_MARKER_MAX, FALSE, NULL, &why);
  if (marker)
    {
      g_auto (GStrv) lines = g_strsplit (g_bytes_get_data (marker, NULL), "\n", -1);
      GString *text = g_string_new (NULL);

      /* Escaped line by line, so the lines stay lines. */
      for (guint i = 0; lines[i]; i++)
        {
          g_autofree char *line = NULL;

          if (!*lines[i])
            continue;
          line = airlock_evidence_escape_bytes ((const guint8 *) lines[i], strlen (lines[i]));
          if (text->len)
            g_string_append_c (text, '\n');
          g_string_append (text, line);
        }
      v->incomplete = g_string_free (text, FALSE);
    }
  else if (why)
    {
      problem (v, AIRLOCK_BUNDLE_INCOMPLETE, "%s", why);
      v->incomplete = g_strdup ("(the marker cannot be read)");
    }

  manifest = read_or_note (v, dirfd, "manifest.json", AIRLOCK_BOUND_MANIFEST);
  if (manifest && (manifest_root = parse_object (v, "manifest.json", manifest)))
    {
      JsonObject *m = json_node_get_object (manifest_root);
      JsonObject *files = airlock_json_get_object (m, "files");

      if (g_strcmp0 (airlock_json_get_string (m, "bundle"), AIRLOCK_BUNDLE_FORMAT) != 0)
        problem (v, "manifest.json", "is not an %s manifest", AIRLOCK_BUNDLE_FORMAT);
      else
        {
          v->has_manifest = TRUE;
          read_manifest (v, m);
        }
      /* What the manifest lists and the directory lacks (the files read
       * below note their own absence). */
      if (files)
        {
          g_autoptr (GList) names = json_object_get_members (files);

          for (GList *l = names; l; l = l->next)
            {
              const char *name = l->data;

              if (!is_present (v, name) && !g_str_equal (name, "events.jsonl")
                  && !g_str_equal (name, "verdict.json") && !g_str_equal (name, "console.log"))
                g_ptr_array_add (v->missing, airlock_bundle_safe_text (name));
            }
        }
    }

  if (v->has_manifest)
    {
      verdict = read_or_note (v, dirfd, "verdict.json", AIRLOCK_BOUND_DERIVED_FILE);
      if (verdict && (verdict_root = parse_object (v, "verdict.json", verdict)))
        read_verdict (v, json_node_get_object (verdict_root));
      events = read_or_note (v, dirfd, "events.jsonl", AIRLOCK_BOUND_DERIVED_FILE);
      if (events)
        read_events (v, events);
      read_network (v, dirfd);
      /* The capture is only named, never read: tshark reads it. */
      if (fstatat (dirfd, "net.pcap", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode))
        {
          v->has_pcap = TRUE;
          v->pcap_size = (guint64) st.st_size;
        }
    }
  read_console_tail (v, dirfd, console_lines);
  close (dirfd);
  return v;
}
