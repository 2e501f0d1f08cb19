CREATE TABLE "rate_limit_windows" (
	"bucket" text PRIMARY KEY NOT NULL,
	"window_start" bigint NOT NULL,
	"used" integer NOT NULL
);
