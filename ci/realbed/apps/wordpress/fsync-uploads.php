<?php
/*
 * Plugin Name: baton: durable uploads
 * Description: fsyncs every uploaded file before WordPress records and acknowledges it.
 *
 * Stock WordPress moves an upload into place and answers without an fsync,
 * so an acknowledged upload can sit in the page cache when its volume is
 * snapshotted or its node loses power, and a fail-over loses it whatever the
 * storage does. The real bed's claim is about acknowledged writes, so the
 * image makes uploads as durable as the database's commits: the file is
 * fsynced before the attachment's row is inserted. On ext4 the fsync of a
 * new file commits the journal transaction that holds its directory entry
 * (and the year/month directories made before it), so the name is durable too.
 */
add_filter('wp_handle_upload', function ($upload) {
    if (empty($upload['file']) || !is_file($upload['file'])) {
        return $upload;
    }
    $handle = fopen($upload['file'], 'r+');
    if ($handle === false || !fsync($handle)) {
        return ['error' => 'baton: the uploaded file could not be synced to its volume'];
    }
    fclose($handle);
    return $upload;
});
