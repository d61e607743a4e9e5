// Prisma CLI configuration (Prisma 7 keeps the URL out of schema.prisma).
// `prisma generate` needs no database; `prisma migrate deploy` (where its engine can be downloaded)
// reads DATABASE_URL here. On machines without the engine use `npm run db:migrate` instead.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'schema.prisma',
  migrations: { path: 'migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/ai_jobs' },
});
