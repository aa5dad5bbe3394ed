/* The policy that admits what bundles recorded (policy-suggest.h). */
#include "config.h"

#include "bundle/policy-suggest.h"

#include "policy/policy.h"
#include "sinkhole/sinkhole.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

/* At most this many comment lines say where one rule came from; the rest
 * are counted. */
#define SOURCES_SHOWN 6

typedef struct {
  char *text;           /* the rule, as written */
  GPtrArray *sources;   /* char *: "amd64: egress-probe[2] connect 198.18.243.18:80 …", distinct */
  GPtrArray *notes;     /* char *: why a clause was left out, distinct */
} Rule;

static void
rule_free (gpointer data)
{
  Rule *r = data;

  g_free (r->text);
  g_ptr_array_unref (r->sources);
  g_ptr_array_unref (r->notes);
  g_free (r);
}

typedef struct {
  GPtrArray *rules;         /* Rule *, in the order first seen */
  GHashTable *by_text;      /* rule text → Rule * */
  GPtrArray *unadmissible;  /* char *: what no rule can admit */
} Suggestion;

static gboolean
str_in (GPtrArray *list, const char *s)
{
  for (guint i = 0; i < list->len; i++)
    if (g_str_equal (list->pdata[i], s))
      return TRUE;
  return FALSE;
}

static void
add_distinct (GPtrArray *list, char *s)
{
  if (str_in (list, s))
    g_free (s);
  else
    g_ptr_array_add (list, s);
}

/* A name as a rule writes it: without the final dot. */
static char *
rule_name (const char *name)
{
  gsize len = strlen (name);

  return g_strndup (name, len > 1 && name[len - 1] == '.' ? len - 1 : len);
}


static gboolean
parses (const char *rule)
{
  g_autoptr (AirlockPolicy) p = airlock_policy_parse (rule, strlen (rule), "suggestion", NULL);

  return p != NULL;
}

/* Adds the rule made of @head ("allow tcp any port 80") and the clauses
 * @dns, @host and @exe (each NULL when absent), dropping a clause the
 * grammar does not take (noted) rather than write a rule that does not
 * parse.  FALSE when even the bare rule does not. */
static gboolean
add_rule (Suggestion *s, const char *head, const char *dns, const char *host, const char *exe,
          const char *source)
{
  g_autoptr (GPtrArray) notes = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *text = NULL;
  g_autofree char *dns_clause = dns ? g_strconcat (" dns=", dns, NULL) : g_strdup ("");
  g_autofree char *host_clause = host ? g_strconcat (" host=", host, NULL) : g_strdup ("");
  g_autofree char *exe_clause = exe ? g_strconcat (" exe=", exe, NULL) : g_strdup ("");
  Rule *r;

  text = g_strconcat (head, dns_clause, host_clause, exe_clause, NULL);
  if (!parses (text) && exe)
    {
      g_ptr_array_add (notes, g_strdup_printf ("no exe=: the path '%s' cannot be written in a "
                                               "policy (blanks, or not a normalised absolute path)",
                                               exe));
      g_free (exe_clause);
      exe_clause = g_strdup ("");
      g_free (text);
      text = g_strconcat (head, dns_clause, host_clause, NULL);
    }
  if (!parses (text) && dns)
    {
      g_ptr_array_add (notes, g_strdup_printf ("no dns=: '%s' is not a plain host name", dns));
      g_free (dns_clause);
      dns_clause = g_strdup ("");
      g_free (text);
      text = g_strconcat (head, host_clause, exe_clause, NULL);
    }
  /* Without its host= a rule would need the address, which the caller
   * gave up for the name: report it as unadmissible instead. */
  if (!parses (text))
    return FALSE;
  r = g_hash_table_lookup (s->by_text, text);
  if (!r)
    {
      r = g_new0 (Rule, 1);
      r->text = g_strdup (text);
      r->sources = g_ptr_array_new_with_free_func (g_free);
      r->notes = g_ptr_array_new_with_free_func (g_free);
      g_ptr_array_add (s->rules, r);
      g_hash_table_insert (s->by_text, r->text, r);
    }
  add_distinct (r->sources, g_strdup (source));
  for (guint i = 0; i < notes->len; i++)
    add_distinct (r->notes, g_strdup (notes->pdata[i]));
  return TRUE;
}

static const char *
basename_of (const char *path)
{
  const char *slash = path ? strrchr (path, '/') : NULL;

  return slash ? slash + 1 : path;
}

/* The protocol word of a socket "inet/stream/tcp": its last part when the
 * policy has a keyword for it, else `any` (every IP protocol). */
static char *
protocol_word (const char *socket, int family)
{
  const char *slash = socket ? strrchr (socket, '/') : NULL;
  const char *p = slash ? slash + 1 : "";

  if (g_str_equal (p, "tcp") || g_str_equal (p, "udp"))
    return g_strdup (p);
  if (g_str_equal (p, "icmp") || g_str_equal (p, "icmpv6") || g_str_equal (p, "ping"))
    return g_strdup (family == AF_INET6 ? "icmpv6" : "icmp");
  return g_strdup ("any");
}

/* Loopback and the unspecified address never leave the guest: not egress,
 * so no rule. */
static gboolean
is_local (int family, const guint8 *a)
{
  static const guint8 zero[16] = { 0 };

  if (family == AF_INET)
    return a[0] == 127 || memcmp (a, zero, 4) == 0;
  return memcmp (a, zero, 15) == 0 && (a[15] == 0 || a[15] == 1);
}

static void
suggest_call (Suggestion *s, const AirlockBundleView *v, const char *arch,
              const AirlockBundleCall *c)
{
  int family = c->dest_family;
  guint8 addr[16] = { 0 };
  char text[INET6_ADDRSTRLEN];
  g_autofree char *who = NULL;
  g_autofree char *proto = NULL;
  g_autofree char *port_part = NULL;
  g_autofree char *dns = NULL;
  g_autofree char *source = NULL;
  g_autofree char *exe = NULL;
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) sent = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *sent_text = NULL;
  g_autofree char *host_shown = NULL;
  g_autofree char *asked_shown = NULL;
  const char *host = NULL;
  const char *exe_name = c->exe ? basename_of (c->exe) : "?";

  if (c->has_pid)
    who = g_strdup_printf ("%s[%u]", exe_name, c->pid);
  else
    who = g_strdup (exe_name);
  if (c->deny_reason || g_strcmp0 (c->action, "deny") == 0)
    {
      add_distinct (s->unadmissible,
                    g_strdup_printf ("%s: %s %s %s: denied by the supervisor (%s): an escape, "
                                     "which fails the gate whatever the policy", arch, who,
                                     c->syscall ? c->syscall : "?",
                                     c->destination ? c->destination : "",
                                     c->deny_reason ? c->deny_reason : "denied"));
      return;
    }
  if (family != AF_INET && family != AF_INET6)
    {
      /* A unix socket's path, netlink: not a network destination.  One
       * that should be and does not decode cannot be admitted. */
      if (c->destination && g_str_has_prefix (c->destination, "?"))
        add_distinct (s->unadmissible,
                      g_strdup_printf ("%s: %s %s %s: a destination that does not decode",
                                       arch, who, c->syscall ? c->syscall : "?", c->destination));
      return;
    }
  memcpy (addr, c->dest_address, family == AF_INET ? 4 : 16);
  /* An IPv4-mapped destination is judged as the IPv4 address. */
  if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED ((const struct in6_addr *) addr))
    {
      memmove (addr, addr + 12, 4);
      memset (addr + 4, 0, 12);
      family = AF_INET;
    }
  if (is_local (family, addr))
    return;
  inet_ntop (family, addr, text, sizeof text);
  proto = protocol_word (c->socket, family);
  port_part = (g_str_equal (proto, "tcp") || g_str_equal (proto, "udp")) && c->has_port
                ? g_strdup_printf (" port %u", c->port) : g_strdup ("");
  if (c->exe && c->exe[0] == '/')
    exe = g_strdup (c->exe);

  /* Every name of the query must match a dns= rule, and a rule takes one:
   * a query of several names gets a rule without dns=. */
  for (guint i = 0; c->dns_names[i]; i++)
    {
      if (!dns)
        dns = rule_name (c->dns_names[i]);
      else if (!airlock_policy_same_name (dns, c->dns_names[i]))
        {
          g_clear_pointer (&dns, g_free);
          break;
        }
    }

  if (v->sinkhole_log)
    host = airlock_sinkhole_log_name_for_address (v->sinkhole_log, family, addr);
  if (host)
    g_ptr_array_add (names, rule_name (host));
  /* The names its connections asked for: the verdict judges it under
   * each (an SNI or Host other than the address's name). */
  for (guint i = 0; v->sinkhole_log && i < v->sinkhole_log->records->len; i++)
    {
      const AirlockSinkholeRecord *r = v->sinkhole_log->records->pdata[i];
      const char *claims[2] = { r->detected.tls_sni, r->detected.http_host };
      static const char *const claim_kind[2] = { "SNI", "Host" };

      if (r->kind != AIRLOCK_SINKHOLE_RECORD_TCP || r->family != family || r->port != c->port
          || memcmp (r->address, addr, family == AF_INET ? 4 : 16) != 0)
        continue;
      for (guint k = 0; k < G_N_ELEMENTS (claims); k++)
        {
          g_autofree char *bare = NULL;
          gboolean seen = FALSE;

          if (!claims[k] || !*claims[k])
            continue;
          bare = k == 1 ? airlock_sinkhole_host_without_port (claims[k]) : g_strdup (claims[k]);
          add_distinct (sent, g_strdup_printf ("%s %s", claim_kind[k], bare));
          for (guint j = 0; j < names->len; j++)
            seen = seen || airlock_policy_same_name (names->pdata[j], bare);
          if (!seen)
            g_ptr_array_add (names, rule_name (bare));
        }
    }

  g_ptr_array_add (sent, NULL);
  sent_text = g_strjoinv (", ", (char **) sent->pdata);
  host_shown = host ? rule_name (host) : NULL;
  asked_shown = c->dns_names[0] ? rule_name (c->dns_names[0]) : NULL;
  source = g_strdup_printf ("%s: %s %s %s%s%s%s%s%s%s", arch, who, c->syscall ? c->syscall : "?",
                            c->destination ? c->destination : text,
                            asked_shown ? " asking for " : "",
                            asked_shown ? asked_shown : "",
                            host_shown ? ", the address handed out for " : "",
                            host_shown ? host_shown : "",
                            *sent_text ? "; its connections sent " : "", sent_text);
  if (host)
    {
      g_autofree char *head = g_strdup_printf ("allow %s any%s", proto, port_part);
      gboolean all = TRUE;

      for (guint i = 0; i < names->len; i++)
        {
          g_autofree char *asked = i == 0 ? g_strdup (source)
                                          : g_strdup_printf ("%s, which asked for '%s'", source,
                                                             (char *) names->pdata[i]);

          all = add_rule (s, head, dns, names->pdata[i], exe, asked) && all;
        }
      if (all)
        return;
      add_distinct (s->unadmissible,
                    g_strdup_printf ("%s: one of its names cannot be written as host= (not a plain "
                                     "host name)", source));
      return;
    }
  {
    g_autofree char *head = g_strdup_printf ("allow %s %s%s", proto, text, port_part);

    if (!add_rule (s, head, dns, NULL, exe, source))
      add_distinct (s->unadmissible, g_strdup_printf ("%s: no rule parses for it", source));
  }
}

char *
airlock_policy_suggest (GPtrArray *views)
{
  Suggestion s = {
    .rules = g_ptr_array_new_with_free_func (rule_free),
    .by_text = g_hash_table_new (g_str_hash, g_str_equal),
    .unadmissible = g_ptr_array_new_with_free_func (g_free),
  };
  g_autoptr (GPtrArray) caveats = g_ptr_array_new_with_free_func (g_free);
  GString *out = g_string_new ("# airlock policy suggest: the rules that admit exactly the egress "
                               "these runs attempted\n");

  for (guint i = 0; i < views->len; i++)
    {
      const AirlockBundleView *v = views->pdata[i];
      const char *arch = v->arch ? v->arch : v->dir;

      g_string_append_printf (out, "#   %s: %s, %s, verdict %s\n", v->dir, arch,
                              v->reference ? v->reference : "image unknown",
                              v->verdict ? v->verdict : "unknown");
      if (v->incomplete || (v->has_complete && !v->complete))
        add_distinct (caveats, g_strdup_printf ("%s: the run or its bundle is not complete: what it "
                                                "did not record is admitted by no rule", arch));
      if (!v->has_events)
        add_distinct (caveats, g_strdup_printf ("%s: no readable events.jsonl: none of its "
                                                "attempts is known", arch));
      if (!v->sinkhole_log)
        add_distinct (caveats, g_strdup_printf ("%s: no sinkhole records (network.jsonl): no "
                                                "host names, rules by address", arch));
      for (guint k = 0; k < v->calls->len; k++)
        {
          const AirlockBundleCall *c = v->calls->pdata[k];

          if (c->attempt)
            suggest_call (&s, v, arch, c);
        }
      for (guint k = 0; k < v->unattributed->len; k++)
        add_distinct (s.unadmissible, g_strdup_printf ("%s: %s", arch,
                                                       (char *) v->unattributed->pdata[k]));
    }
  g_string_append (out, "# Review each rule before you trust it: exe= is a path in the image, "
                        "not an identity (docs/policy.md).\n");
  for (guint i = 0; i < caveats->len; i++)
    g_string_append_printf (out, "# note: %s\n", (char *) caveats->pdata[i]);
  if (s.rules->len == 0)
    g_string_append (out, "\n# No egress was recorded: the default policy (no rule) admits "
                          "these runs.\n");
  for (guint i = 0; i < s.rules->len; i++)
    {
      const Rule *r = s.rules->pdata[i];

      g_string_append (out, "\n");
      for (guint k = 0; k < r->sources->len && k < SOURCES_SHOWN; k++)
        g_string_append_printf (out, "# %s\n", (char *) r->sources->pdata[k]);
      if (r->sources->len > SOURCES_SHOWN)
        g_string_append_printf (out, "# … and %u more\n", r->sources->len - SOURCES_SHOWN);
      for (guint k = 0; k < r->notes->len; k++)
        g_string_append_printf (out, "# note: %s\n", (char *) r->notes->pdata[k]);
      g_string_append_printf (out, "%s\n", r->text);
    }
  if (s.unadmissible->len)
    {
      g_string_append (out, "\n# Not admissible by any policy (these fail the gate whatever it "
                            "says):\n");
      for (guint i = 0; i < s.unadmissible->len; i++)
        g_string_append_printf (out, "#   %s\n", (char *) s.unadmissible->pdata[i]);
    }
  g_hash_table_unref (s.by_text);
  g_ptr_array_unref (s.rules);
  g_ptr_array_unref (s.unadmissible);
  return g_string_free (out, FALSE);
}
