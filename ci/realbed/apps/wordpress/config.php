<?php
// Writes /etc/wordpress/config-default.php, the file Debian's wp-config.php
// reads when no host-specific one exists, from the environment; run by the
// entrypoint at every start. Values are written with var_export, so no
// value can break out of its string.
$need = ['WORDPRESS_DB_HOST', 'WORDPRESS_DB_NAME', 'WORDPRESS_DB_USER', 'WORDPRESS_DB_PASSWORD'];
$values = [];
foreach ($need as $name) {
    $v = getenv($name);
    if ($v === false || $v === '') {
        fwrite(STDERR, "wordpress-entrypoint: $name is not set\n");
        exit(1);
    }
    $values[$name] = var_export($v, true);
}
$salts = '';
foreach (['AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT'] as $k) {
    // Fresh at every start: they sign cookies, which the REST driver does not
    // use; application passwords do not depend on them.
    $salts .= "define('$k', " . var_export(bin2hex(random_bytes(32)), true) . ");\n";
}
$config = <<<PHP
<?php
define('DB_HOST', {$values['WORDPRESS_DB_HOST']});
define('DB_NAME', {$values['WORDPRESS_DB_NAME']});
define('DB_USER', {$values['WORDPRESS_DB_USER']});
define('DB_PASSWORD', {$values['WORDPRESS_DB_PASSWORD']});
define('DB_CHARSET', 'utf8mb4');
$salts
// The site is reached by whatever address the request came in by (a node's
// address and NodePort, which a fail-over changes), so its URLs follow the
// request's Host.
\$baton_host = isset(\$_SERVER['HTTP_HOST']) ? \$_SERVER['HTTP_HOST'] : 'localhost';
define('WP_HOME', 'http://' . \$baton_host);
define('WP_SITEURL', 'http://' . \$baton_host);
// Application passwords need HTTPS, or an environment of type local: the
// bed's traffic stays on the kind network.
define('WP_ENVIRONMENT_TYPE', 'local');
// Offline and quiet: no cron requests to itself, no updates, no calls out.
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('FS_METHOD', 'direct');
PHP;
$file = '/etc/wordpress/config-default.php';
if (file_put_contents("$file.new", $config) === false || !chmod("$file.new", 0640) || !rename("$file.new", $file)) {
    fwrite(STDERR, "wordpress-entrypoint: cannot write $file\n");
    exit(1);
}
