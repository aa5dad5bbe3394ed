/* The egress policy: an allow-list of destinations (docs/policy.md).
 *
 * With no policy, or an empty one, nothing is admitted: the default is no
 * egress.  Each rule admits attempts by protocol, destination network,
 * port or port range, and optionally the DNS names involved, the host name
 * the destination address was handed out for (by the sinkhole's DNS) or
 * the executable making the attempt.  A policy only decides pass or fail for
 * an attempt; every attempt is recorded whatever the policy says.
 *
 * The matcher takes plain values (family, protocol, address bytes, port,
 * names, executable path), so it does not depend on how an attempt was
 * observed (supervisor record or captured flow). */
#pragma once

#include "../airlock-macros.h"

G_BEGIN_DECLS

#define AIRLOCK_POLICY_ERROR (airlock_policy_error_quark ())
typedef enum {
  AIRLOCK_POLICY_ERROR_PARSE,    /* a line the grammar does not take: "NAME:LINE:COLUMN: reason" */
  AIRLOCK_POLICY_ERROR_TOO_LARGE, /* the text is over AIRLOCK_POLICY_TEXT_MAX bytes */
} AirlockPolicyError;

AIRLOCK_PUBLIC GQuark airlock_policy_error_quark (void);

/* A policy is written by a person, but a bound keeps a wrong path (a disk
 * image given as the policy) from being read whole into memory. */
#define AIRLOCK_POLICY_TEXT_MAX (1024 * 1024)

typedef struct _AirlockPolicy AirlockPolicy;

/* The default policy: no rule, admits nothing.  Transfer full; never NULL. */
AIRLOCK_PUBLIC AirlockPolicy *airlock_policy_new_default (void);

/* Parses @len bytes of @text (need not be NUL-terminated) as a policy;
 * @name (e.g. the file's path, or "--allow") is what error messages call
 * it.  An empty text, or one with only comments and blank lines, is the
 * default policy.
 *
 * Returns the policy (transfer full), or NULL with @error set:
 * AIRLOCK_POLICY_ERROR_PARSE for the first line that does not parse, the
 * message "NAME:LINE:COLUMN: reason" (1-based line and byte column);
 * AIRLOCK_POLICY_ERROR_TOO_LARGE over AIRLOCK_POLICY_TEXT_MAX bytes. */
AIRLOCK_PUBLIC AirlockPolicy *airlock_policy_parse (const char *text, gsize len, const char *name,
                                                    GError **error);

/* Reads and parses the file at @path (its path names it in errors).
 * Returns NULL with @error set: a G_FILE_ERROR when it cannot be read, or
 * as airlock_policy_parse(). */
AIRLOCK_PUBLIC AirlockPolicy *airlock_policy_load (const char *path, GError **error);

/* Whether @a and @b are the same DNS name to the policy: ASCII case and
 * one trailing dot ignored ("Example.COM." is "example.com").  The verdict
 * and `airlock policy suggest` compare names by it too. */
AIRLOCK_PUBLIC gboolean airlock_policy_same_name (const char *a, const char *b);

/* Parses @text as airlock_policy_parse() does and appends its rules after
 * those of @policy (rules are tried in order: this matters only for which
 * rule is reported).  For `airlock gate --allow RULE`, each RULE after a
 * policy file.  On error @policy is left unchanged. */
AIRLOCK_PUBLIC gboolean airlock_policy_append (AirlockPolicy *policy, const char *text, gsize len,
                                               const char *name, GError **error);

/* The number of rules (0 for the default policy). */
AIRLOCK_PUBLIC guint airlock_policy_get_n_rules (const AirlockPolicy *policy);

/* The rules as text that airlock_policy_parse() reads back into the same
 * policy: one rule per line as written (tokens joined by one space), each
 * ending in '\n'; "" for the default policy.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_policy_to_text (const AirlockPolicy *policy);

/* Accepts NULL. */
AIRLOCK_PUBLIC void airlock_policy_free (AirlockPolicy *policy);

/* Whether @policy admits an attempt: @family AF_INET or AF_INET6,
 * @protocol an IPPROTO_* number (IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP,
 * IPPROTO_ICMPV6, or any other, which only a rule for protocol `any`
 * admits), @address the destination in network order (4 bytes for
 * AF_INET, 16 for AF_INET6; a v4-mapped ::ffff:a.b.c.d is judged as the
 * IPv4 address a.b.c.d), @port the destination port (ignored for ICMP and
 * ICMPv6), @dns_names the names the attempt asked for or resolved
 * (NULL-terminated, or NULL for none), @exe the absolute path of the
 * executable making the attempt (or NULL when unknown).  The attempt has
 * no host name, so no `host=` rule admits it (airlock_policy_admits_attempt()
 * takes one).
 *
 * Returns TRUE when a rule admits it, and then, if @ret_rule is not NULL,
 * sets it to the first admitting rule's text as written (comments and
 * extra blanks removed), owned by @policy.  Returns FALSE when no rule
 * does, or @family is neither AF_INET nor AF_INET6; @ret_rule is then left
 * untouched. */
AIRLOCK_PUBLIC gboolean airlock_policy_admits (const AirlockPolicy *policy, int family, int protocol,
                                               const guint8 *address, guint16 port,
                                               const char *const *dns_names, const char *exe,
                                               const char **ret_rule);

/* One attempt as the matcher sees it: airlock_policy_admits()'s
 * arguments, and the host name of its destination. */
typedef struct {
  int family;                    /* AF_INET or AF_INET6 */
  int protocol;                  /* an IPPROTO_* number */
  const guint8 *address;         /* 4 or 16 bytes by @family, network order */
  guint16 port;                  /* ignored for ICMP and ICMPv6 */
  const char *const *dns_names;  /* NULL-terminated, or NULL for none */
  const char *exe;               /* absolute path, or NULL when unknown */
  /* The name @address was handed out for by the sinkhole's DNS in this
   * run ("pypi.org.", presentation form), or a name the connection itself
   * claims (its TLS SNI, its HTTP Host) when the caller judges it under
   * that one; NULL when there is none, and then no `host=` rule admits the
   * attempt.  The caller finds it (airlock_sinkhole_log_name_for_address()
   * in the verdict): the policy compares names, it reads no records. */
  const char *host;
} AirlockPolicyAttempt;

/* As airlock_policy_admits(), for an attempt that may have a host name:
 * `host=` rules admit only an attempt whose @attempt->host they match.
 * @ret_rule as there: set only when it returns TRUE, owned by @policy. */
AIRLOCK_PUBLIC gboolean airlock_policy_admits_attempt (const AirlockPolicy *policy,
                                                       const AirlockPolicyAttempt *attempt,
                                                       const char **ret_rule);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockPolicy, airlock_policy_free)

G_END_DECLS
