package shop;

import java.util.concurrent.ConcurrentHashMap;
import java.util.Map;

/** In-memory accounts. */
public class AccountRepo {
    private final Map<String, Account> accounts = new ConcurrentHashMap<>();

    /** The account with this id, or null when there is none. */
    public Account findById(String id) {
        return accounts.get(id);
    }

    public void save(Account account) {
        accounts.put(account.getId(), account);
    }
}
