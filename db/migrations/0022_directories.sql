CREATE TABLE "directories" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"type" text NOT NULL,
	"name" text NOT NULL,
	"state" text DEFAULT 'unlinked' NOT NULL,
	"external_key" text NOT NULL,
	"domain" text,
	"token_hash" text NOT NULL,
	"token_prefix" text NOT NULL,
	"last_sync_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "directory_group_members" (
	"environment_id" text COLLATE "C" NOT NULL,
	"group_id" text COLLATE "C" NOT NULL,
	"directory_user_id" text COLLATE "C" NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "directory_group_members_pkey" PRIMARY KEY("group_id","directory_user_id")
);
--> statement-breakpoint
CREATE TABLE "directory_groups" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"directory_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"display_name" text NOT NULL,
	"external_id" text,
	"attributes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"role_id" text COLLATE "C",
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "directory_users" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"environment_id" text COLLATE "C" NOT NULL,
	"directory_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"user_name" text NOT NULL,
	"external_id" text,
	"email" text,
	"first_name" text,
	"last_name" text,
	"state" text DEFAULT 'active' NOT NULL,
	"attributes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"custom_attributes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"user_id" text COLLATE "C",
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "directories" ADD CONSTRAINT "directories_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "directories" ADD CONSTRAINT "directories_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "directory_group_members" ADD CONSTRAINT "directory_group_members_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "directory_group_members" ADD CONSTRAINT "directory_group_members_group_id_directory_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."directory_groups"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "directory_group_members" ADD CONSTRAINT "directory_group_members_directory_user_id_directory_users_id_fk" FOREIGN KEY ("directory_user_id") REFERENCES "public"."directory_users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "directory_groups" ADD CONSTRAINT "directory_groups_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "directory_groups" ADD CONSTRAINT "directory_groups_directory_id_directories_id_fk" FOREIGN KEY ("directory_id") REFERENCES "public"."directories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "directory_groups" ADD CONSTRAINT "directory_groups_role_id_roles_id_fk" FOREIGN KEY ("role_id") REFERENCES "public"."roles"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "directory_users" ADD CONSTRAINT "directory_users_environment_id_environments_id_fk" FOREIGN KEY ("environment_id") REFERENCES "public"."environments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "directory_users" ADD CONSTRAINT "directory_users_directory_id_directories_id_fk" FOREIGN KEY ("directory_id") REFERENCES "public"."directories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "directory_users" ADD CONSTRAINT "directory_users_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "directories_token_hash_unique" ON "directories" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "directories_environment_idx" ON "directories" USING btree ("environment_id","id");--> statement-breakpoint
CREATE INDEX "directories_organization_idx" ON "directories" USING btree ("environment_id","organization_id","id");--> statement-breakpoint
CREATE INDEX "directory_group_members_user_idx" ON "directory_group_members" USING btree ("directory_user_id","group_id");--> statement-breakpoint
CREATE UNIQUE INDEX "directory_groups_external_id_unique" ON "directory_groups" USING btree ("directory_id","external_id");--> statement-breakpoint
CREATE INDEX "directory_groups_directory_idx" ON "directory_groups" USING btree ("environment_id","directory_id","id");--> statement-breakpoint
CREATE INDEX "directory_groups_display_name_idx" ON "directory_groups" USING btree ("directory_id",lower("display_name"));--> statement-breakpoint
CREATE UNIQUE INDEX "directory_users_user_name_unique" ON "directory_users" USING btree ("directory_id",lower("user_name"));--> statement-breakpoint
CREATE UNIQUE INDEX "directory_users_external_id_unique" ON "directory_users" USING btree ("directory_id","external_id");--> statement-breakpoint
CREATE INDEX "directory_users_directory_idx" ON "directory_users" USING btree ("environment_id","directory_id","id");--> statement-breakpoint
CREATE INDEX "directory_users_user_idx" ON "directory_users" USING btree ("user_id");