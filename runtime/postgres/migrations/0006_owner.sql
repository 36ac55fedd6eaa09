-- Version 6: listing a thread owner's threads (ListThreads with
-- Meta{"owner": ...}, as the server lists for its users) reads only that
-- owner's rows, newest first, instead of every thread of the schema (the
-- GIN index finds them, but the newest-first order then walks them all).
CREATE INDEX ilmek_threads_owner ON ilmek_threads ((meta ->> 'owner'), updated_ns DESC, thread_id DESC)
	WHERE (meta ->> 'owner') IS NOT NULL;
