/**
 * Team inbox: a shared list of incoming requests with an owner per request.
 */
import { computed, Default, NAME, pattern, UI, type VNode, Writable } from "commonfabric";

interface Request {
  id: string;
  from: string;
  subject: string;
  owner: string;
}

interface TeamInboxInput {
  /** The requests, newest first. */
  requests: Writable<Request[] | Default<[]>>;
}

/** A shared inbox of team requests. #inbox #team */
export interface TeamInboxOutput {
  [NAME]: string;
  [UI]: VNode;
  /** Requests nobody owns yet. */
  unassigned: Request[];
}

export default pattern<TeamInboxInput, TeamInboxOutput>(({ requests }) => {
  const unassigned = computed(() => requests.get().filter((r) => !r.owner));
  return {
    [NAME]: "Team inbox",
    [UI]: (
      <cf-vstack gap="1">
        {unassigned.map((r) => <div>{r.subject} — {r.from}</div>)}
      </cf-vstack>
    ),
    unassigned,
  };
});
