from loft_warehouse.registry import specs
from loft_warehouse.sources import sparc, spider
from loft_warehouse.sql.databases import databases, table_csv
from loft_warehouse.sql.pgdump import parse_dump


def spec(name):
    return next(s for s in specs() if s.task == "sql" and s.dataset == name)


def test_spider_documents_are_the_tables_of_19_databases(root):
    data = spider.load(spec("spider"), root)
    assert len(databases(root)) == 19
    assert len(data.documents) == 77
    doc = next(d for d in data.documents if d.pid == "concert_singer.singer")
    assert doc.title == "singer"
    assert doc.corpus_id == "concert_singer"
    assert doc.source_file.endswith("postgres_dumps_dev_spider4sparql/concert_singer.sql")
    assert doc.source_row == 46
    assert doc.text.split("\n")[:2] == [
        "singer_id,name,country,song_name,song_release_year,age,is_male",
        "1,Joe Sharp,Netherlands,You,1992,52,0",
    ]
    assert {d.corpus_id for d in data.documents} == set(databases(root))
    assert "cre_Doc_Template_Mgt.templates" in {d.pid for d in data.documents}


def test_spider_queries_drop_the_missing_wta_1(root):
    data = spider.load(spec("spider"), root)
    assert len(data.queries) == 1034 - 62
    assert spider.dropped_queries(root)[0][1] == "wta_1"
    first = data.queries[0]
    assert first.qid == "spider-dev-0"
    assert first.turns == ["How many singers do we have?"]
    assert first.gold == [None]
    assert first.gold_sql == ["SELECT count(*) FROM singer"]
    assert first.db_id == first.corpus_id == "concert_singer"
    assert first.source_row == 1
    assert first.gold_pids == [
        [
            "concert_singer.concert",
            "concert_singer.singer",
            "concert_singer.singer_in_concert",
            "concert_singer.stadium",
        ]
    ]


def test_sparc_conversations_keep_every_turn(root):
    data = sparc.load(spec("sparc"), root)
    assert len(data.queries) == 422 - 18
    assert sum(len(q.turns) for q in data.queries) == 1144
    first = data.queries[0]
    assert first.qid == "sparc-dev-0"
    assert first.db_id == "flight_2"
    assert first.turns == [
        "What are all the airlines?",
        "Of these, which is Jetblue Airways?",
        "What is the country corresponding it?",
    ]
    assert first.gold_sql[1] == 'SELECT * FROM AIRLINES WHERE Airline  =  "JetBlue Airways"'
    assert first.gold == [None, None, None]
    assert len(first.gold_pids) == 3


def test_csv_quotes_embedded_newlines_and_shows_null_as_empty(root):
    table = databases(root)["real_estate_properties"].table("properties")
    text = table_csv(table)
    assert '\n1,House,1991-06-21 23:52:10,1979-05-13 16:58:06,park,"4745 Emerson' in text
    assert 'Suite 829\nSouth Garret, IN 16772-5682",7,372652.2909,1.6800,4201.8000,aut,suscipit,,,,,,' in text
    assert not text.endswith("\n")


def test_a_table_is_shown_as_loft_loads_a_corpus_line(tmp_path, monkeypatch):
    dump = tmp_path / "db.sql"
    dump.write_text("CREATE TABLE public.notes (\n    body text\n);\n\nCOPY public.notes (body) FROM stdin;\n"
                    "on childhood abuse\n\\.\n")  # fmt: skip
    monkeypatch.setattr(spider, "databases", lambda root: {"db": parse_dump(dump)})
    documents, _ = spider.database_documents(tmp_path)
    assert documents[0].text == "body\non "
