<?php
// Installs WordPress on its first start, and is a no-op on every later one:
// waits for the database (for at most WORDPRESS_DB_WAIT seconds, 600 by
// default: after a fail-over MariaDB may be replaying its redo log), runs
// wp_install with the administrator WORDPRESS_ADMIN_USER /
// WORDPRESS_ADMIN_PASSWORD, sets pretty permalinks (the REST API at
// /wp-json/), and gives the administrator the application password
// WORDPRESS_APP_PASSWORD, named baton-driver, that the bed's driver uses.
// Exits non-zero, naming the cause, if any step fails.
function fail($message) {
    fwrite(STDERR, "wordpress-install: $message\n");
    exit(1);
}
foreach (['WORDPRESS_ADMIN_USER', 'WORDPRESS_ADMIN_PASSWORD', 'WORDPRESS_APP_PASSWORD'] as $name) {
    if (getenv($name) === false || getenv($name) === '') {
        fail("$name is not set");
    }
}
$user = getenv('WORDPRESS_ADMIN_USER');
$email = getenv('WORDPRESS_ADMIN_EMAIL') ?: "$user@baton.invalid";
$app_password = getenv('WORDPRESS_APP_PASSWORD');
if (!preg_match('/^[A-Za-z0-9]{12,}$/', $app_password)) {
    fail('WORDPRESS_APP_PASSWORD: at least 12 letters and digits (WordPress drops anything else)');
}

mysqli_report(MYSQLI_REPORT_OFF);
$wait = (int) (getenv('WORDPRESS_DB_WAIT') ?: 600);
$deadline = time() + $wait;
[$host, $port] = array_pad(explode(':', getenv('WORDPRESS_DB_HOST'), 2), 2, '3306');
for ($last = ''; ; sleep(2)) {
    $db = @mysqli_connect($host, getenv('WORDPRESS_DB_USER'), getenv('WORDPRESS_DB_PASSWORD'), getenv('WORDPRESS_DB_NAME'), (int) $port);
    if ($db) {
        mysqli_close($db);
        break;
    }
    if (mysqli_connect_error() !== $last) {
        $last = mysqli_connect_error();
        fwrite(STDERR, "wordpress-install: waiting for the database: $last\n");
    }
    if (time() > $deadline) {
        fail("the database did not answer within {$wait} s: $last");
    }
}

$_SERVER['HTTP_HOST'] = 'localhost';
$_SERVER['REQUEST_URI'] = '/';
define('WP_INSTALLING', true);
require '/usr/share/wordpress/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';

if (!is_blog_installed()) {
    $result = wp_install('baton', $user, $email, false, '', wp_slash(getenv('WORDPRESS_ADMIN_PASSWORD')));
    if (is_wp_error($result)) {
        fail('wp_install: ' . $result->get_error_message());
    }
    fwrite(STDERR, "wordpress-install: installed, administrator $user\n");
}
if (get_option('permalink_structure') !== '/%postname%/') {
    update_option('permalink_structure', '/%postname%/');
    delete_option('rewrite_rules'); // rebuilt, with the REST API's, at the next request
}
$account = get_user_by('login', $user);
if (!$account) {
    fail("no user $user");
}
$passwords = WP_Application_Passwords::get_user_application_passwords($account->ID);
$current = array_values(array_filter($passwords, fn($p) => $p['name'] === 'baton-driver'));
if (!$current || !wp_check_password($app_password, $current[0]['password'], $account->ID)) {
    // What WP_Application_Passwords::create_new_application_password stores,
    // with the password given instead of a generated one.
    $passwords = array_values(array_filter($passwords, fn($p) => $p['name'] !== 'baton-driver'));
    $passwords[] = [
        'uuid' => wp_generate_uuid4(), 'app_id' => '', 'name' => 'baton-driver',
        'password' => wp_hash_password($app_password), 'created' => time(), 'last_used' => null, 'last_ip' => null,
    ];
    if (!update_user_meta($account->ID, WP_Application_Passwords::USERMETA_KEY_APPLICATION_PASSWORDS, $passwords)) {
        fail('cannot store the application password');
    }
    update_network_option(get_main_network_id(), WP_Application_Passwords::OPTION_KEY_IN_USE, true);
    fwrite(STDERR, "wordpress-install: application password baton-driver set for $user\n");
}
