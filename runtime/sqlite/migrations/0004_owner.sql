-- Version 4: listing a thread owner's threads (ListThreads with
-- Meta{"owner": ...}, as the server lists for its users) reads only that
-- owner's rows, newest first, instead of every thread of the store.
CREATE INDEX IF NOT EXISTS ilmek_threads_owner ON ilmek_threads (json_extract(meta, '$.owner'), updated_ns, thread_id)
	WHERE json_extract(meta, '$.owner') IS NOT NULL;
