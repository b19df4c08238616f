-- hivepark quickstart: page views by day and hour.
-- Run with:  hivepark --warehouse ./warehouse -f examples/quickstart.sql
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

-- One statement per partition (dynamic partition inserts come with the next release).
INSERT OVERWRITE TABLE page_views PARTITION (ds='2024-05-01', hr=8)
  SELECT user_id, url, referrer, ms FROM raw_views WHERE ds = '2024-05-01' AND hr = 8;
INSERT OVERWRITE TABLE page_views PARTITION (ds='2024-05-01', hr=9)
  SELECT user_id, url, referrer, ms FROM raw_views WHERE ds = '2024-05-01' AND hr = 9;
INSERT OVERWRITE TABLE page_views PARTITION (ds='2024-05-01', hr=10)
  SELECT user_id, url, referrer, ms FROM raw_views WHERE ds = '2024-05-01' AND hr = 10;
INSERT OVERWRITE TABLE page_views PARTITION (ds='2024-05-02', hr=9)
  SELECT user_id, url, referrer, ms FROM raw_views WHERE ds = '2024-05-02' AND hr = 9;
INSERT OVERWRITE TABLE page_views PARTITION (ds='2024-05-02', hr=12)
  SELECT user_id, url, referrer, ms FROM raw_views WHERE ds = '2024-05-02' AND hr = 12;
INSERT INTO TABLE page_views PARTITION (ds='2024-05-03', hr=11)
  VALUES (7, '/product/42', 'google.com', 120), (8, '/cart', NULL, 340);

-- A partition whose data arrives later, and a partition with its own location.
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

-- EXPLAIN shows what is read: partitions=K/N, the partition filter, the directories.
EXPLAIN SELECT url, ms FROM page_views WHERE ds = '2024-05-01' AND hr IN (9, 10);
EXPLAIN SELECT count(*) FROM page_views WHERE hr > 9 OR ds LIKE '2024-05-03%';

DESCRIBE FORMATTED page_views PARTITION (ds='2024-05-01', hr=9);
