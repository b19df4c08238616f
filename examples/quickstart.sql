-- hivepark quickstart: page views by day and hour.
-- Run it from this directory (LOAD DATA LOCAL INPATH reads a relative path from the working
-- directory, as Hive does):  cd examples && ../.venv/bin/hivepark -f quickstart.sql --warehouse ../warehouse
-- (scripts/setup.sh runs it from .quickstart/, next to a copy of pageviews.csv)

CREATE DATABASE IF NOT EXISTS web;
USE web;

-- Raw events as they arrive: comma-separated text, one file per drop.
CREATE TABLE raw_views (user_id BIGINT, url STRING, referrer STRING, ms INT, ds STRING, hr INT)
ROW FORMAT DELIMITED FIELDS TERMINATED BY ','
STORED AS TEXTFILE;
LOAD DATA LOCAL INPATH 'pageviews.csv' INTO TABLE raw_views;

-- The warehouse table: Parquet, partitioned by day and hour, Hive's directory layout.
CREATE TABLE page_views (user_id BIGINT, url STRING, referrer STRING, ms INT)
PARTITIONED BY (ds STRING, hr INT)
STORED AS PARQUET;

-- One static partition...
INSERT OVERWRITE TABLE page_views PARTITION (ds='2024-05-01', hr=8)
  SELECT user_id, url, referrer, ms FROM raw_views WHERE ds = '2024-05-01' AND hr = 8;
-- ...then a whole day routed to its hours at run time (a static day, dynamic hours)...
INSERT OVERWRITE TABLE page_views PARTITION (ds='2024-05-01', hr)
  SELECT user_id, url, referrer, ms, hr FROM raw_views WHERE ds = '2024-05-01' AND hr > 8;
-- ...and everything else, days and hours both dynamic (Hive's nonstrict mode).
SET hive.exec.dynamic.partition.mode=nonstrict;
INSERT OVERWRITE TABLE page_views PARTITION (ds, hr)
  SELECT user_id, url, referrer, ms, ds, hr FROM raw_views WHERE ds > '2024-05-01';
INSERT INTO TABLE page_views PARTITION (ds='2024-05-03', hr=11)
  VALUES (7, '/product/42', 'google.com', 120), (8, '/cart', NULL, 340);

-- A partition whose data arrives later.
ALTER TABLE page_views ADD IF NOT EXISTS PARTITION (ds='2024-05-04', hr=0);

SHOW PARTITIONS page_views;

-- hr > 9 compares as numbers (hr=10 and hr=12 match; text order would miss them).
SELECT ds, hr, count(*) AS views, round(avg(ms)) AS avg_ms
FROM page_views
WHERE ds BETWEEN '2024-05-01' AND '2024-05-02' AND hr > 9
GROUP BY ds, hr
ORDER BY ds, hr;

-- Top pages on one day, joined with a small dimension.
CREATE TABLE pages (url STRING, section STRING) STORED AS PARQUET;
INSERT INTO TABLE pages VALUES ('/', 'home'), ('/search', 'search'), ('/product/42', 'catalog'),
  ('/product/7', 'catalog'), ('/cart', 'checkout'), ('/checkout', 'checkout'), ('/help', 'support');
SELECT p.section, count(*) AS views
FROM page_views v JOIN pages p ON v.url = p.url
WHERE v.ds = '2024-05-01'
GROUP BY p.section
ORDER BY views DESC, p.section;

-- Map-join partition pruning: the small side (the sale days) runs first; only the
-- partitions of page_views for those days are read.
CREATE TABLE calendar (ds STRING, sale_day BOOLEAN) STORED AS PARQUET;
INSERT INTO TABLE calendar VALUES ('2024-05-01', false), ('2024-05-02', true), ('2024-05-03', false);
SELECT v.ds, count(*) AS views FROM page_views v JOIN calendar c ON v.ds = c.ds
WHERE c.sale_day GROUP BY v.ds;
EXPLAIN ANALYZE SELECT v.ds, count(*) FROM page_views v JOIN calendar c ON v.ds = c.ds
WHERE c.sale_day GROUP BY v.ds;

-- EXPLAIN shows what is read: partitions=K/N, the partition filter, the directories.
EXPLAIN SELECT url, ms FROM page_views WHERE ds = '2024-05-01' AND hr IN (9, 10);
EXPLAIN SELECT count(*) FROM page_views WHERE hr > 9 OR ds LIKE '2024-05-03%';

DESCRIBE FORMATTED page_views PARTITION (ds='2024-05-01', hr=9);
