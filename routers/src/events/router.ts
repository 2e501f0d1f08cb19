import { apiProcedure, router } from '../trpc.ts';
import { EventList, ListEventsInput } from './schemas.ts';
import { listEvents } from './service.ts';

const tags = ['Events'];

export const eventsRouter = router({
  list: apiProcedure
    .meta({ openapi: { method: 'GET', path: '/events', tags, summary: 'List events' } })
    .input(ListEventsInput)
    .output(EventList)
    .query(({ ctx, input }) => listEvents(ctx.scope, input)),
});
