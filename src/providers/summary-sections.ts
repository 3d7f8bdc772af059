/**
 * [issue 15] The sections of every `[Context Summary]`, in order: the offline summarizer writes them
 * from the transcript's structure, and the Gemini summarizer is asked for them and checked for them.
 */
export const SUMMARY_SECTIONS = [
  'Goal',
  'User requests (in order)',
  'Current state and next step',
  'Errors and what fixed them',
  'Files touched',
  'Commands run',
  'Decisions and constraints',
  'Open TODOs',
  'Identifiers',
  'Done',
  'Lookup hints',
] as const;
export type SummarySection = (typeof SUMMARY_SECTIONS)[number];

/** What each section holds, as the Gemini prompt says it. */
export const SECTION_GUIDE: Readonly<Record<SummarySection, string>> = {
  Goal: 'what the agent is working towards now',
  'User requests (in order)': "the user's requests, verbatim, oldest first; the latest one whole",
  'Current state and next step': "where the work stands and the assistant's next step (its last plan)",
  'Errors and what fixed them':
    'each error (the command or tool, its first error line) and what fixed it, or that nothing did, so a failed approach is not tried again',
  'Files touched': 'each file path and what happened to it: read, edited, created or deleted, with counts',
  'Commands run': 'the commands that matter, verbatim, with their outcome (ok, exit status, first error line)',
  'Decisions and constraints': 'what the user or assistant decided or required, in their words',
  'Open TODOs': 'what is still to do',
  Identifiers: 'names worth keeping verbatim: functions, types, variables, flags, ids, branches, commit shas',
  Done: 'what was finished',
  'Lookup hints': 'the archived turn ids and the words to search the archive for to find details left out',
};
