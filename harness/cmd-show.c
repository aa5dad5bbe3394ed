/* airlock show: a run at a glance from its evidence bundle — the digests,
 * the verdict and its reasons, the negative controls, the workload's
 * attempts and processes, what the sinkhole served it (names asked,
 * addresses handed out, each connection and what it sent), unattributed
 * flows, the console's end.  It reads
 * the bundle as recorded (lib/bundle/bundle-read.c) and checks nothing:
 * that is `airlock verify`. */
#include "config.h"

#include "harness.h"
#include "network-table.h"
#include "table.h"

#include <arpa/inet.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define CONSOLE_TAIL_LINES 40

typedef struct {
  const char *process;        /* --process: an exe path, or a basename; or NULL */
  const char *dest_text;      /* --dest as given, or NULL */
  AirlockPolicy *dest;        /* --dest as "allow any CIDR", or NULL */
} ShowFilter;

/* ---- what is shown ---- */

static const char *
basename_of (const char *path)
{
  const char *slash = path ? strrchr (path, '/') : NULL;

  return slash ? slash + 1 : path;
}

static gboolean
call_shown (const AirlockBundleCall *c, const ShowFilter *f)
{
  if (!c->attempt)
    return FALSE;
  /* An exact path, or a bare name for the executable's basename. */
  if (f->process
      && !(c->exe && (g_str_equal (c->exe, f->process)
                      || (!strchr (f->process, '/') && g_str_equal (basename_of (c->exe), f->process)))))
    return FALSE;
  /* Through the policy matcher: the same address rules as a policy's
   * (v4-mapped IPv6 addresses are the IPv4 they go out as). */
  if (f->dest
      && !(c->dest_family
           && airlock_policy_admits (f->dest, c->dest_family, 0, c->dest_address, c->port, NULL,
                                     NULL, NULL)))
    return FALSE;
  return TRUE;
}

/* The calls the attempts table leaves out, counted by name: "socket ×3". */
static char *
other_calls_text (const AirlockBundleView *v)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  g_autoptr (GArray) counts = g_array_new (FALSE, TRUE, sizeof (guint));
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < v->calls->len; i++)
    {
      const AirlockBundleCall *c = v->calls->pdata[i];
      guint j;

      if (c->attempt)
        continue;
      for (j = 0; j < names->len; j++)
        if (g_str_equal (names->pdata[j], c->syscall))
          break;
      if (j == names->len)
        {
          guint zero = 0;

          g_ptr_array_add (names, c->syscall);
          g_array_append_val (counts, zero);
        }
      g_array_index (counts, guint, j)++;
    }
  for (guint j = 0; j < names->len; j++)
    g_string_append_printf (out, "%s%s ×%u", j ? ", " : "", (const char *) names->pdata[j],
                            g_array_index (counts, guint, j));
  return g_string_free (out, FALSE);
}

static gboolean
verdict_is_pass (const AirlockBundleView *v)
{
  return g_strcmp0 (v->verdict, "pass") == 0;
}

static gboolean
is_missing (const AirlockBundleView *v, const char *name)
{
  for (guint i = 0; i < v->missing->len; i++)
    if (g_str_equal (v->missing->pdata[i], name))
      return TRUE;
  return FALSE;
}

/* How a file the view lacks is lacking. */
static const char *
is_missing_text (const AirlockBundleView *v, const char *name)
{
  return is_missing (v, name) ? "is missing" : "cannot be read";
}

/* ---- text ---- */

static void
print_field (const char *name, const char *value)
{
  printf ("  %-11s %s\n", name, value ? value : "(not recorded)");
}

static void
print_text (const AirlockBundleView *v, const char *label, const ShowFilter *f)
{
  static const char *const attempt_header[] = {
    "process", "syscall", "family", "type/protocol", "destination", "port", "DNS name",
    "outcome", NULL,
  };
  static const char *const process_header[] = {
    "pid", "guest pid", "guest ppid", "executes", "argv", "caller", NULL,
  };
  static const char *const control_header[] = {
    "control", "key", "supervisor", "capture", NULL,
  };
  Table t;
  guint n_attempts = 0, n_shown = 0;

  printf ("%s: bundle %s (as recorded, not checked: 'airlock verify' checks it)\n", label, v->dir);
  if (v->incomplete)
    {
      g_auto (GStrv) lines = g_strsplit (v->incomplete, "\n", -1);

      printf ("%s: INCOMPLETE: the bundle was not finished; what it holds may stop anywhere\n",
              label);
      for (guint i = 0; lines[i]; i++)
        printf ("  | %s\n", lines[i]);
    }
  for (guint i = 0; i < v->missing->len; i++)
    printf ("%s: missing: %s\n", label, (const char *) v->missing->pdata[i]);
  for (guint i = 0; i < v->problems->len; i++)
    printf ("%s: unreadable: %s\n", label, (const char *) v->problems->pdata[i]);

  if (!v->has_manifest)
    {
      GString *files = g_string_new (NULL);

      for (guint i = 0; i < v->present->len; i++)
        g_string_append_printf (files, "%s%s", i ? ", " : "", (const char *) v->present->pdata[i]);
      printf ("%s: no readable manifest.json: not a bundle that can be shown; it holds: %s\n",
              label, files->len ? files->str : "nothing");
      g_string_free (files, TRUE);
    }
  else
    {
      g_autofree char *kernel = NULL;
      g_autofree char *supervisor = NULL;
      g_autofree char *evidence = NULL;
      g_autofree char *capture = NULL;
      g_autofree char *pcap = g_build_filename (v->dir, "net.pcap", NULL);

      kernel = v->kernel_release || v->kernel_sha256
                   ? g_strdup_printf ("%s sha256:%s", v->kernel_release ? v->kernel_release : "?",
                                      v->kernel_sha256 ? v->kernel_sha256 : "?")
                   : NULL;
      supervisor = v->supervisor_sha256
                       ? g_strdup_printf ("sha256:%s (build id %s%s%s)", v->supervisor_sha256,
                                          v->supervisor_build_id ? v->supervisor_build_id : "?",
                                          v->supervisor_recorder ? "; recorder " : "",
                                          v->supervisor_recorder ? v->supervisor_recorder : "")
                       : NULL;
      if (!v->has_complete)
        evidence = NULL;
      else if (v->complete)
        evidence = g_strdup ("complete");
      else
        evidence = g_strdup_printf ("incomplete: %s",
                                    v->incomplete_reason ? v->incomplete_reason : "no reason given");
      if (v->has_pcap)
        capture = g_strdup_printf ("%s (%" G_GUINT64_FORMAT " bytes; tshark -r %s)", pcap,
                                   v->pcap_size, pcap);
      else if (is_missing (v, "net.pcap") && !v->pcap_error)
        capture = g_strdup ("none: the manifest lists net.pcap, and it is missing");
      else
        capture = g_strdup_printf ("none%s%s", v->pcap_error ? ": " : "",
                                   v->pcap_error ? v->pcap_error : "");
      print_field ("image", v->reference ? v->reference : "(a test program)");
      print_field ("index", v->index_digest ? v->index_digest : "(none)");
      print_field ("manifest", v->manifest_digest ? v->manifest_digest : "(none)");
      print_field ("config", v->config_digest ? v->config_digest : "(none)");
      print_field ("kernel", kernel);
      if (v->initramfs_sha256)
        {
          g_autofree char *initramfs = g_strdup_printf ("sha256:%s", v->initramfs_sha256);

          print_field ("initramfs", initramfs);
        }
      else
        print_field ("initramfs", NULL);
      print_field ("supervisor", supervisor);
      print_field ("accel", v->accel);
      print_field ("evidence", evidence);
      print_field ("capture", capture);
    }

  if (v->verdict)
    {
      printf ("%s: verdict %s\n", label, v->verdict);
      for (guint i = 0; i < v->reasons->len; i++)
        printf ("  %s\n", (const char *) v->reasons->pdata[i]);
    }
  else if (v->has_manifest)
    printf ("%s: verdict unknown (verdict.json %s)\n", label,
            is_missing_text (v, "verdict.json"));

  if (v->has_controls)
    {
      printf ("%s: negative controls (%u of %u seen by the supervisor and in the capture)\n", label,
              v->controls_observed, v->controls_total);
      table_init (&t, control_header);
      for (guint i = 0; i < v->controls->len; i++)
        {
          const AirlockBundleControl *c = v->controls->pdata[i];
          char *cells[4];

          cells[0] = g_strdup (c->name);
          cells[1] = g_strdup (c->key);
          cells[2] = g_strdup (c->supervisor ? "seen" : "NOT SEEN");
          cells[3] = g_strdup (c->capture ? "seen" : "NOT SEEN");
          table_add (&t, cells);
        }
      table_print (&t, "  ");
    }

  if (v->has_events)
    {
      g_autofree char *others = other_calls_text (v);

      table_init (&t, attempt_header);
      for (guint i = 0; i < v->calls->len; i++)
        {
          const AirlockBundleCall *c = v->calls->pdata[i];
          const char *slash = c->socket ? strchr (c->socket, '/') : NULL;
          char *cells[8] = { NULL };

          n_attempts += c->attempt;
          if (!call_shown (c, f))
            continue;
          n_shown++;
          cells[0] = c->has_pid ? g_strdup_printf ("%s[%u]", c->exe ? c->exe : "?", c->pid)
                                : g_strdup (c->exe);
          cells[1] = g_strdup (c->syscall);
          if (c->socket)
            {
              cells[2] = slash ? g_strndup (c->socket, (gsize) (slash - c->socket))
                               : g_strdup (c->socket);
              cells[3] = g_strdup (slash ? slash + 1 : NULL);
            }
          cells[4] = g_strdup (c->destination);
          cells[5] = c->has_port ? g_strdup_printf ("%u", c->port) : NULL;
          cells[6] = *c->dns_names ? g_strjoinv (",", c->dns_names) : NULL;
          cells[7] = g_strdup (c->outcome);
          table_add (&t, cells);
        }
      if (f->process || f->dest)
        printf ("%s: attempts (%u of %u%s%s%s%s)\n", label, n_shown, n_attempts,
                f->process ? ", --process " : "", f->process ? f->process : "",
                f->dest ? ", --dest " : "", f->dest ? f->dest_text : "");
      else
        printf ("%s: attempts (%u)\n", label, n_attempts);
      table_print (&t, "  ");
      if (*others)
        printf ("  (not attempts, so not listed: %s; events.jsonl has them)\n", others);

      printf ("%s: processes (%u)\n", label, v->processes->len);
      table_init (&t, process_header);
      for (guint i = 0; i < v->processes->len; i++)
        {
          const AirlockBundleProcess *p = v->processes->pdata[i];
          char *cells[6];

          cells[0] = p->has_nspid ? g_strdup_printf ("%u", p->nspid) : NULL;
          cells[1] = p->has_pid ? g_strdup_printf ("%u", p->pid) : NULL;
          cells[2] = p->has_ppid ? g_strdup_printf ("%u", p->ppid) : NULL;
          cells[3] = g_strdup (p->path);
          cells[4] = p->argv ? argv_text ((const char *const *) p->argv) : NULL;
          cells[5] = g_strdup (p->caller);
          table_add (&t, cells);
        }
      table_print (&t, "  ");
      printf ("%s: workload %s\n", label, v->workload_exit ? v->workload_exit : "exit not recorded");
    }
  else if (v->has_manifest)
    printf ("%s: attempts and processes unknown (events.jsonl %s)\n", label,
            is_missing_text (v, "events.jsonl"));

  /* Host-side, from network.jsonl: what the workload's requests were,
   * whatever the supervisor saw of them. */
  if (v->network)
    {
      network_tables_print (label, v->network);
      /* The records name no process, and are the network's view. */
      if (f->process || f->dest)
        printf ("  (--process and --dest filter the attempts, not these records)\n");
    }
  else if (v->has_manifest && v->sinkhole_error)
    printf ("%s: network: no records: %s\n", label, v->sinkhole_error);

  if (v->verdict)
    {
      printf ("%s: unattributed flows (%u, as verdict.json's reasons give them)\n", label,
              v->unattributed->len);
      for (guint i = 0; i < v->unattributed->len; i++)
        printf ("  %s\n", (const char *) v->unattributed->pdata[i]);
    }

  /* Why a run did not pass is often in its last kernel or init lines. */
  if (!verdict_is_pass (v) && v->console_tail->len)
    {
      printf ("%s: console.log, last %u line%s:\n", label, v->console_tail->len,
              v->console_tail->len == 1 ? "" : "s");
      for (guint i = 0; i < v->console_tail->len; i++)
        printf ("  | %s\n", (const char *) v->console_tail->pdata[i]);
    }
}

/* ---- JSON ---- */

static void
add_json (JsonBuilder *b, const AirlockBundleView *v, const ShowFilter *f)
{
  guint n_attempts = 0;

  json_builder_begin_object (b);
  airlock_json_set_str (b, "dir", v->dir);
  airlock_json_set_str (b, "arch", v->arch);
  /* FALSE: no readable manifest.json (exit status 1). */
  airlock_json_set_bool (b, "readable", v->has_manifest);
  airlock_json_set_str (b, "incomplete", v->incomplete);
  airlock_json_set_string_array (b, "missing", v->missing);
  airlock_json_set_string_array (b, "unreadable", v->problems);
  if (!v->has_manifest)
    airlock_json_set_string_array (b, "files", v->present);

  if (v->has_manifest)
    {
      json_builder_set_member_name (b, "image");
      json_builder_begin_object (b);
      airlock_json_set_str (b, "reference", v->reference);
      airlock_json_set_image_digests (b, v->index_digest, v->manifest_digest, v->config_digest);
      json_builder_end_object (b);
      json_builder_set_member_name (b, "kernel");
      json_builder_begin_object (b);
      airlock_json_set_str (b, "release", v->kernel_release);
      airlock_json_set_str (b, "sha256", v->kernel_sha256);
      json_builder_end_object (b);
      json_builder_set_member_name (b, "initramfs");
      json_builder_begin_object (b);
      airlock_json_set_str (b, "sha256", v->initramfs_sha256);
      json_builder_end_object (b);
      json_builder_set_member_name (b, "supervisor");
      json_builder_begin_object (b);
      airlock_json_set_str (b, "sha256", v->supervisor_sha256);
      airlock_json_set_str (b, "build_id", v->supervisor_build_id);
      airlock_json_set_str (b, "recorder", v->supervisor_recorder);
      json_builder_end_object (b);
      airlock_json_set_str (b, "accel", v->accel);
      json_builder_set_member_name (b, "complete");
      if (v->has_complete)
        json_builder_add_boolean_value (b, v->complete);
      else
        json_builder_add_null_value (b);
      airlock_json_set_str (b, "reason", v->incomplete_reason);
      json_builder_set_member_name (b, "capture");
      if (v->has_pcap)
        {
          g_autofree char *pcap = g_build_filename (v->dir, "net.pcap", NULL);

          json_builder_begin_object (b);
          airlock_json_set_str (b, "path", pcap);
          airlock_json_set_int (b, "size", (gint64) v->pcap_size);
          json_builder_end_object (b);
        }
      else
        json_builder_add_null_value (b);
      airlock_json_set_str (b, "capture_error", v->pcap_error);
    }

  airlock_json_set_str (b, "verdict", v->verdict);
  airlock_json_set_string_array (b, "reasons", v->reasons);
  json_builder_set_member_name (b, "controls");
  if (v->has_controls)
    {
      json_builder_begin_object (b);
      airlock_json_set_int (b, "observed", v->controls_observed);
      airlock_json_set_int (b, "total", v->controls_total);
      json_builder_set_member_name (b, "each");
      json_builder_begin_array (b);
      for (guint i = 0; i < v->controls->len; i++)
        {
          const AirlockBundleControl *c = v->controls->pdata[i];

          json_builder_begin_object (b);
          airlock_json_set_str (b, "name", c->name);
          airlock_json_set_str (b, "key", c->key);
          airlock_json_set_bool (b, "supervisor", c->supervisor);
          airlock_json_set_bool (b, "capture", c->capture);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  else
    json_builder_add_null_value (b);

  /* null, not [], when events.jsonl could not be read: unknown is not none. */
  json_builder_set_member_name (b, "attempts");
  if (v->has_events)
    {
      json_builder_begin_array (b);
      for (guint i = 0; i < v->calls->len; i++)
        {
          const AirlockBundleCall *c = v->calls->pdata[i];

          n_attempts += c->attempt;
          if (!call_shown (c, f))
            continue;
          json_builder_begin_object (b);
          airlock_json_set_int (b, "seq", (gint64) c->seq);
          airlock_json_set_str (b, "exe", c->exe);
          json_builder_set_member_name (b, "pid");
          if (c->has_pid)
            json_builder_add_int_value (b, c->pid);
          else
            json_builder_add_null_value (b);
          airlock_json_set_str (b, "syscall", c->syscall);
          airlock_json_set_str (b, "socket", c->socket);
          airlock_json_set_str (b, "destination", c->destination);
          json_builder_set_member_name (b, "port");
          if (c->has_port)
            json_builder_add_int_value (b, c->port);
          else
            json_builder_add_null_value (b);
          airlock_json_set_strv (b, "dns", (const char *const *) c->dns_names);
          airlock_json_set_str (b, "action", c->action);
          airlock_json_set_str (b, "deny_reason", c->deny_reason);
          airlock_json_set_str (b, "outcome", c->outcome);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "attempts_total");
  if (v->has_events)
    json_builder_add_int_value (b, n_attempts);
  else
    json_builder_add_null_value (b);

  json_builder_set_member_name (b, "processes");
  if (v->has_events)
    {
      json_builder_begin_array (b);
      for (guint i = 0; i < v->processes->len; i++)
        {
          const AirlockBundleProcess *p = v->processes->pdata[i];

          json_builder_begin_object (b);
          airlock_json_set_int (b, "seq", (gint64) p->seq);
          json_builder_set_member_name (b, "pid");
          if (p->has_nspid)
            json_builder_add_int_value (b, p->nspid);
          else
            json_builder_add_null_value (b);
          json_builder_set_member_name (b, "guest_pid");
          if (p->has_pid)
            json_builder_add_int_value (b, p->pid);
          else
            json_builder_add_null_value (b);
          json_builder_set_member_name (b, "guest_ppid");
          if (p->has_ppid)
            json_builder_add_int_value (b, p->ppid);
          else
            json_builder_add_null_value (b);
          airlock_json_set_str (b, "path", p->path);
          airlock_json_set_strv (b, "argv", (const char *const *) p->argv);
          airlock_json_set_str (b, "caller", p->caller);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  else
    json_builder_add_null_value (b);
  airlock_json_set_str (b, "workload_exit", v->workload_exit);
  /* null, not empty, without network.jsonl (sinkhole_error says why). */
  json_builder_set_member_name (b, "network");
  if (v->network)
    network_report_add_json (b, v->network);
  else
    json_builder_add_null_value (b);
  airlock_json_set_str (b, "sinkhole_error", v->sinkhole_error);
  if (v->verdict)
    airlock_json_set_string_array (b, "unattributed", v->unattributed);
  else
    airlock_json_set_str (b, "unattributed", NULL);
  if (!verdict_is_pass (v))
    airlock_json_set_string_array (b, "console_tail", v->console_tail);
  json_builder_end_object (b);
}

/* ---- the command ---- */

/* Shows one bundle (text) or adds it to @b (JSON).  TRUE when it could be
 * read as one. */
static gboolean
show_one (const char *dir, const ShowFilter *f, JsonBuilder *b, gboolean *first)
{
  g_autoptr (AirlockBundleView) v = airlock_bundle_read (dir, CONSOLE_TAIL_LINES);

  if (b)
    add_json (b, v, f);
  else
    {
      if (!*first)
        printf ("\n");
      print_text (v, v->arch ? v->arch : dir, f);
    }
  *first = FALSE;
  return v->has_manifest;
}

/* --dest NETWORK as a policy of one rule, "allow any NETWORK": the policy's
 * own parser and matcher, so an address means here what it means in a
 * policy.  NULL with @error. */
static AirlockPolicy *
parse_dest (const char *text, GError **error)
{
  g_autofree char *address = g_strndup (text, strcspn (text, "/"));
  g_autofree char *rule = NULL;
  g_autoptr (GError) local = NULL;
  guint8 bytes[16];
  AirlockPolicy *policy;

  /* Only an address or network: nothing that would read as another word
   * or clause of the rule (a blank, "exe=", "#", "any"). */
  if (!*text || text[strspn (text, "0123456789abcdefABCDEF:./")] != '\0'
      || (inet_pton (AF_INET, address, bytes) != 1 && inet_pton (AF_INET6, address, bytes) != 1))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--dest '%s' is not an IPv4 or IPv6 address or network "
                   "(e.g. 198.51.100.0/24, 2001:db8::/32, 10.0.2.3)", text);
      return NULL;
    }
  rule = g_strdup_printf ("allow any %s", text);
  policy = airlock_policy_parse (rule, strlen (rule), "--dest", &local);
  if (!policy)
    {
      /* "--dest:1:COLUMN: reason": the column is in our rule, not in what
       * was typed. */
      const char *why = strstr (local->message, ": ");

      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--dest '%s': %s", text,
                   why ? why + 2 : local->message);
    }
  return policy;
}

int
cmd_show (int argc, char **argv)
{
  g_autofree char *process = NULL;
  g_autofree char *dest = NULL;
  g_autoptr (AirlockPolicy) dest_policy = NULL;
  g_autoptr (JsonBuilder) b = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = g_option_context_new (
      "BUNDLE_DIR… - a run at a glance from its evidence bundle: digests, verdict and reasons, "
      "negative controls, attempts, processes, the network the sinkhole served, unattributed "
      "flows, the console's end");
  gboolean json = FALSE;
  ShowFilter filter = { NULL };
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json,
      "print one JSON object ({\"bundles\": [...]}) instead of the tables", NULL },
    { "process", 0, 0, G_OPTION_ARG_STRING, &process,
      "only the attempts of the executable EXE: its path, or a basename (egress-probe)", "EXE" },
    { "dest", 0, 0, G_OPTION_ARG_STRING, &dest,
      "only the attempts whose destination address is in CIDR (198.51.100.0/24, 2001:db8::1)",
      "CIDR" },
    { NULL },
  };
  guint failed = 0;
  gboolean first = TRUE;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (
      ctx, "BUNDLE_DIR is a bundle (written by 'airlock run|gate --out DIR': DIR/amd64, DIR/arm64),\n"
           "or a directory holding amd64/ and arm64/ bundles.  A bundle that is INCOMPLETE or\n"
           "lacks files is shown as far as it goes, with what is missing.\n\n"
           "show is for reading: it checks nothing (no digest, no HMAC, no re-derivation) and\n"
           "shows what the files say.  'airlock verify' is for checking.\n\n"
           "Exit status: 0 shown, 1 a bundle with no readable manifest.json, 2 usage.");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "airlock show: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (argc < 2)
    {
      fprintf (stderr, "airlock show: give a bundle directory (or one holding ARCH/ bundles)\n");
      return HARNESS_EXIT_USAGE;
    }
  if (process && !*process)
    {
      fprintf (stderr, "airlock show: --process needs an executable's path or basename\n");
      return HARNESS_EXIT_USAGE;
    }
  if (dest && !(dest_policy = parse_dest (dest, &error)))
    {
      fprintf (stderr, "airlock show: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  for (int i = 1; i < argc; i++)
    if (!g_file_test (argv[i], G_FILE_TEST_IS_DIR))
      {
        fprintf (stderr, "airlock show: '%s' is not a directory\n", argv[i]);
        return HARNESS_EXIT_USAGE;
      }
  filter.process = process;
  filter.dest_text = dest;
  filter.dest = dest_policy;

  if (json)
    {
      b = json_builder_new ();
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "filter");
      json_builder_begin_object (b);
      airlock_json_set_str (b, "process", process);
      airlock_json_set_str (b, "dest", dest);
      json_builder_end_object (b);
      json_builder_set_member_name (b, "bundles");
      json_builder_begin_array (b);
    }
  for (int i = 1; i < argc; i++)
    {
      const char *dir = argv[i];
      guint found = 0;

      if (harness_is_bundle (dir))
        {
          failed += !show_one (dir, &filter, b, &first);
          continue;
        }
      /* A gate's --out DIR: one bundle per arch. */
      for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
        {
          g_autofree char *sub = g_build_filename (dir, airlock_arch_to_string ((AirlockArch) a), NULL);

          if (!g_file_test (sub, G_FILE_TEST_IS_DIR))
            continue;
          found++;
          failed += !show_one (sub, &filter, b, &first);
        }
      if (!found)
        {
          g_autoptr (AirlockBundleView) v = airlock_bundle_read (dir, 0);

          /* Said as for any unreadable bundle: what is there, what is not. */
          if (b)
            add_json (b, v, &filter);
          else
            {
              if (!first)
                printf ("\n");
              printf ("%s: no manifest.json, and no amd64/ or arm64/ bundle in it\n", dir);
            }
          first = FALSE;
          failed++;
        }
    }
  if (json)
    {
      g_autoptr (JsonGenerator) gen = json_generator_new ();
      g_autoptr (JsonNode) root = NULL;
      g_autofree char *text = NULL;

      json_builder_end_array (b);
      json_builder_end_object (b);
      root = json_builder_get_root (b);
      json_generator_set_root (gen, root);
      json_generator_set_pretty (gen, TRUE);
      text = json_generator_to_data (gen, NULL);
      printf ("%s\n", text);
    }
  return failed ? HARNESS_EXIT_FAIL : HARNESS_EXIT_OK;
}
