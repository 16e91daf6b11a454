/*
 * core/s3_config.c: the S3 settings by the AWS conventions, read once per process.
 *
 * Credentials, first found wins: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (and
 * AWS_SESSION_TOKEN) from the environment; then the profile (AWS_PROFILE, else
 * "default") in the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else
 * ~/.aws/credentials); then the same keys in the config file (AWS_CONFIG_FILE, else
 * ~/.aws/config, section "[profile NAME]" or "[default]"). Not supported, and refused with
 * a message saying so rather than silently ignored: web-identity tokens
 * (AWS_WEB_IDENTITY_TOKEN_FILE, web_identity_token_file), container credentials
 * (AWS_CONTAINER_CREDENTIALS_*), SSO, role_arn, credential_process, and the instance
 * metadata service (IMDSv2), which is what remains when nothing is configured.
 * Region: AWS_REGION, AWS_DEFAULT_REGION, the profile's region, else us-east-1.
 * Endpoint: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url; an
 * endpoint means an S3-compatible store, addressed path-style unless
 * MCDC_S3_ADDRESSING_STYLE=virtual (AWS itself: virtual-hosted unless =path). HTTPS
 * unless the endpoint names http:// explicitly; one without a scheme is https://.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/s3_int.h"
#include "mcdc/error.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static mcdc_s3_config  g_cfg;
static int             g_state; /* 0 unread, 1 read, < 0 the error */
static mcdc_error      g_err;   /* the error, replayed on every later call */

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static void copy(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

/* The value of @p key in section @p section of the INI file @p path into @p out
 * (@p cap bytes). True when found. */
static bool ini_get(const char *path, const char *section, const char *key, char *out, size_t cap)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return false;
    char line[8192];
    bool in = false, found = false;
    while (!found && fgets(line, sizeof line, f)) {
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        size_t n = strlen(s);
        while (n && isspace((unsigned char)s[n - 1]))
            s[--n] = '\0';
        if (*s == '#' || *s == ';' || *s == '\0')
            continue;
        if (*s == '[') {
            char *e = strchr(s, ']');
            if (!e)
                continue;
            *e = '\0';
            char *name = s + 1;
            while (isspace((unsigned char)*name))
                name++;
            size_t m = strlen(name);
            while (m && isspace((unsigned char)name[m - 1]))
                name[--m] = '\0';
            in = strcmp(name, section) == 0;
            continue;
        }
        if (!in)
            continue;
        char *eq = strchr(s, '=');
        if (!eq)
            continue;
        char *k = s, *v = eq + 1;
        *eq = '\0';
        size_t kl = strlen(k);
        while (kl && isspace((unsigned char)k[kl - 1]))
            k[--kl] = '\0';
        while (isspace((unsigned char)*v))
            v++;
        if (strcasecmp(k, key) == 0) {
            copy(out, cap, v);
            found = true;
        }
    }
    fclose(f);
    return found;
}

static void file_path(char out[1024], const char *env_name, const char *home_rel)
{
    const char *e = env(env_name), *home = env("HOME");
    if (e)
        copy(out, 1024, e);
    else if (home)
        snprintf(out, 1024, "%s/%s", home, home_rel);
    else
        out[0] = '\0';
}

/* Look @p key up in the profile: credentials file first when @p creds, then config. */
static bool profile_get(const char *profile, const char *key, bool creds, char *out, size_t cap)
{
    char cred_file[1024], conf_file[1024], conf_section[300];
    file_path(cred_file, "AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
    file_path(conf_file, "AWS_CONFIG_FILE", ".aws/config");
    if (strcmp(profile, "default") == 0)
        copy(conf_section, sizeof conf_section, "default");
    else
        snprintf(conf_section, sizeof conf_section, "profile %s", profile);
    if (creds && cred_file[0] && ini_get(cred_file, profile, key, out, cap))
        return true;
    return conf_file[0] && ini_get(conf_file, conf_section, key, out, cap);
}

static int refuse(const char *what)
{
    mcdc_error_set(MCDC_EINVAL, "S3 credentials: %s is not supported yet", what);
    return mcdc_error_hint("give AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for "
                           "temporary credentials) in the environment, or a profile with aws_access_key_id "
                           "and aws_secret_access_key in ~/.aws/credentials");
}

static int load(mcdc_s3_config *c)
{
    memset(c, 0, sizeof *c);
    const char *profile = env("AWS_PROFILE");
    bool named_profile = profile != NULL;
    if (!profile)
        profile = "default";
    char tmp[4096];

    if (env("AWS_ACCESS_KEY_ID") || env("AWS_SECRET_ACCESS_KEY")) {
        if (!env("AWS_ACCESS_KEY_ID") || !env("AWS_SECRET_ACCESS_KEY")) {
            mcdc_error_set(MCDC_EINVAL, "S3 credentials: %s is set but %s is not",
                           env("AWS_ACCESS_KEY_ID") ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                           env("AWS_ACCESS_KEY_ID") ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
            return mcdc_error_hint("set both, or neither to use a profile from ~/.aws/credentials");
        }
        copy(c->access_key, sizeof c->access_key, env("AWS_ACCESS_KEY_ID"));
        copy(c->secret_key, sizeof c->secret_key, env("AWS_SECRET_ACCESS_KEY"));
        copy(c->session_token, sizeof c->session_token, env("AWS_SESSION_TOKEN"));
        copy(c->cred_source, sizeof c->cred_source, "environment");
    } else if (env("AWS_WEB_IDENTITY_TOKEN_FILE")) {
        return refuse("a web-identity token (AWS_WEB_IDENTITY_TOKEN_FILE)");
    } else if (env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") || env("AWS_CONTAINER_CREDENTIALS_FULL_URI")) {
        return refuse("container credentials (AWS_CONTAINER_CREDENTIALS_*)");
    } else if (profile_get(profile, "aws_access_key_id", true, c->access_key, sizeof c->access_key)) {
        if (!profile_get(profile, "aws_secret_access_key", true, c->secret_key, sizeof c->secret_key)) {
            mcdc_error_set(MCDC_EINVAL, "S3 credentials: profile '%s' has aws_access_key_id but no "
                           "aws_secret_access_key", profile);
            return mcdc_error_hint("add aws_secret_access_key to the profile in ~/.aws/credentials");
        }
        profile_get(profile, "aws_session_token", true, c->session_token, sizeof c->session_token);
        snprintf(c->cred_source, sizeof c->cred_source, "profile %.40s", profile);
    } else {
        static const char *const unsupported[][2] = {
            { "web_identity_token_file", "a web-identity token (web_identity_token_file)" },
            { "role_arn", "assuming a role (role_arn)" },
            { "credential_process", "credential_process" },
            { "sso_start_url", "SSO (sso_start_url)" },
            { "sso_session", "SSO (sso_session)" },
        };
        for (size_t i = 0; i < sizeof unsupported / sizeof *unsupported; i++)
            if (profile_get(profile, unsupported[i][0], true, tmp, sizeof tmp))
                return refuse(unsupported[i][1]);
        if (named_profile)
            mcdc_error_set(MCDC_EINVAL, "S3 credentials: profile '%s' (AWS_PROFILE) has no "
                           "aws_access_key_id in ~/.aws/credentials or ~/.aws/config", profile);
        else
            mcdc_error_set(MCDC_EINVAL, "S3 credentials: none found (AWS_ACCESS_KEY_ID is not set and "
                           "~/.aws/credentials has no [default] profile); the instance metadata "
                           "service (IMDSv2) is not supported yet");
        return mcdc_error_hint("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE naming a "
                               "profile in ~/.aws/credentials");
    }

    if (env("AWS_REGION"))
        copy(c->region, sizeof c->region, env("AWS_REGION"));
    else if (env("AWS_DEFAULT_REGION"))
        copy(c->region, sizeof c->region, env("AWS_DEFAULT_REGION"));
    else if (!profile_get(profile, "region", false, c->region, sizeof c->region))
        copy(c->region, sizeof c->region, "us-east-1");
    for (const char *p = c->region; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-') {
            mcdc_error_set(MCDC_EINVAL, "S3 region '%.60s': not a region name", c->region);
            return mcdc_error_hint("set AWS_REGION to a name such as eu-west-1");
        }

    const char *ep = env("AWS_ENDPOINT_URL_S3");
    if (!ep)
        ep = env("AWS_ENDPOINT_URL");
    if (!ep && profile_get(profile, "endpoint_url", false, tmp, sizeof tmp) && tmp[0])
        ep = tmp;
    const char *style = env("MCDC_S3_ADDRESSING_STYLE");
    if (style && strcmp(style, "path") != 0 && strcmp(style, "virtual") != 0) {
        mcdc_error_set(MCDC_EINVAL, "MCDC_S3_ADDRESSING_STYLE '%.40s': not path or virtual", style);
        return mcdc_error_hint("set MCDC_S3_ADDRESSING_STYLE=path (bucket in the path) or virtual "
                               "(bucket in the host name), or unset it");
    }
    if (ep) {
        if (strncmp(ep, "http://", 7) == 0 || strncmp(ep, "https://", 8) == 0)
            copy(c->endpoint, sizeof c->endpoint, ep);
        else if (strstr(ep, "://")) {
            mcdc_error_set(MCDC_EINVAL, "S3 endpoint '%.200s': only http:// and https:// are supported", ep);
            return mcdc_error_hint("set AWS_ENDPOINT_URL to https://host[:port] (http:// only for a local test store)");
        } else
            snprintf(c->endpoint, sizeof c->endpoint, "https://%.400s", ep);
        size_t n = strlen(c->endpoint);
        while (n > 8 && c->endpoint[n - 1] == '/')
            c->endpoint[--n] = '\0';
        c->path_style = !style || strcmp(style, "path") == 0;
    } else {
        c->path_style = style && strcmp(style, "path") == 0;
    }
    return 0;
}

int mcdc_s3__config(const mcdc_s3_config **out)
{
    pthread_mutex_lock(&g_mu);
    if (g_state == 0) {
        int rc = load(&g_cfg);
        if (rc < 0) {
            g_err = *mcdc_error_last();
            memset(&g_cfg, 0, sizeof g_cfg);
        }
        g_state = rc < 0 ? rc : 1;
    }
    int rc = g_state < 0 ? g_state : 0;
    if (rc < 0) {
        mcdc_error_restore(&g_err);
    }
    *out = rc < 0 ? NULL : &g_cfg;
    pthread_mutex_unlock(&g_mu);
    return rc;
}

void mcdc_s3__config_reset(void)
{
    pthread_mutex_lock(&g_mu);
    g_state = 0;
    memset(&g_cfg, 0, sizeof g_cfg);
    pthread_mutex_unlock(&g_mu);
}
